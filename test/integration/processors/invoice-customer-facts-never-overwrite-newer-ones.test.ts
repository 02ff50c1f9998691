import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { eventually } from '../../helpers/pipeline.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * An invoice's customer facts are upserted before the invoice (docs/mapping.md, "Customer facts
 * before the invoice"), from the customers and transactions queues at once. When the customer's
 * own, newer update is sent and applied while the invoice's older facts are on their way, the
 * older facts must not be what the engine keeps (invariant 2: the newest state wins).
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-1' };
const INVOICE: RecordKey = { kind: 'transaction', source: 'api', external_id: 'INV-1' };
const customer = (t: number, taxNumber: string) =>
  CanonicalEvent.parse({ id: `c-${t}`, type: 'customer.upserted', occurred_at: at(t), connector: 'erp', record: CUSTOMER, data: { name: 'Acme GmbH', tax_number: taxNumber } });
const invoice = (t: number, taxNumber: string) =>
  CanonicalEvent.parse({
    id: `i-${t}`,
    type: 'invoice.upserted',
    occurred_at: at(t),
    connector: 'erp',
    record: INVOICE,
    data: {
      number: 'INV-1',
      issued_at: at(0),
      status: 'active',
      currency: 'USD',
      tax_inclusive: false,
      customer: { external_id: 'C-1', name: 'Acme GmbH', tax_number: taxNumber },
      lines: [{ id: '1', unit_price: '100.00', quantity: '1' }],
    },
  });

describe("an invoice's customer facts and the customer's own newer update", () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('never leave the engine with the older facts when the newer update landed first', async () => {
    rig = await startModelRig(redis.url);
    await rig.accept(customer(1, 'DE-OLD'));
    expect(await rig.settle([CUSTOMER])).toBe(true);
    // The invoice (made at 2 s, with the tax number then) upserts its customer first; the service
    // holds that write a second. Meanwhile the customer's own update (3 s) is sent and applied.
    rig.engine.delays = (key, n) => (key === 'customer|api|C-1' && n === 1 ? 1_000 : 0);
    await rig.accept(invoice(2, 'DE-INVOICE'));
    await eventually(() => rig!.engine.api.requestsTo('PUT /v1/customers/').length === 2);
    await rig.accept(customer(3, 'DE-NEW'));
    await eventually(() => rig!.engine.writes.filter((w) => w.key === 'customer|api|C-1').length >= 3, 10_000);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await rig.settle([CUSTOMER, INVOICE])).toBe(true);

    expect(rig.engine.customers.get('api|C-1')?.body).toMatchObject({ tax_number: 'DE-NEW' });
  });
});
