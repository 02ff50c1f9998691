import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { startModelRig, type Crash, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Skip unchanged (docs/performance.md) trusts `sent_hash`: the body the service last accepted. A
 * worker killed after the service applied a newer body but before taxsync marked it applied
 * leaves the old hash behind. An update back to the old body must then be sent, or the engine
 * keeps the newer body for good while taxsync believes it holds the old one (invariant 2).
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-1' };
const INVOICE: RecordKey = { kind: 'transaction', source: 'api', external_id: 'INV-1' };

const customer = (t: number, name: string) => CanonicalEvent.parse({ id: `c-${t}`, type: 'customer.upserted', occurred_at: at(t), connector: 'erp', record: CUSTOMER, data: { name } });
const invoice = (t: number, price: string) =>
  CanonicalEvent.parse({
    id: `i-${t}`,
    type: 'invoice.upserted',
    occurred_at: at(t),
    connector: 'erp',
    record: INVOICE,
    data: { number: 'INV-1', issued_at: at(0), status: 'active', currency: 'USD', tax_inclusive: false, lines: [{ id: '1', unit_price: price, quantity: '1' }] },
  });

describe('skip unchanged after a job stopped between the answer and the mark', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  /** The record's second write is applied by the engine, then its job stops; meanwhile `back` (the first body again) arrives. */
  async function stopAfterSecondWrite(record: RecordKey, back: CanonicalEvent): Promise<ModelRig> {
    const crash: Crash = { point: 'before-mark', record: record.external_id, nth: 1 };
    const made = await startModelRig(redis.url, {
      queues: [record.kind === 'customer' ? 'customers' : 'transactions'],
      crashes: [crash],
      onCrash: () => made.accept(back),
    });
    return made;
  }

  it('sends a customer body equal to the one last marked when a newer one reached the engine since', async () => {
    rig = await stopAfterSecondWrite(CUSTOMER, customer(3, 'Ada'));
    await rig.accept(customer(1, 'Ada'));
    expect(await rig.settle([CUSTOMER])).toBe(true);
    await rig.accept(customer(2, 'Grace'));
    expect(await rig.settle([CUSTOMER])).toBe(true);

    expect(rig.crashed).toHaveLength(1);
    // The newest event says Ada; the engine must not be left with Grace.
    expect(rig.engine.customers.get('api|C-1')?.body.name).toBe('Ada');
    expect(rig.engine.writes.filter((w) => w.key === 'customer|api|C-1').map((w) => (w.body as { name: string }).name)).toEqual(['Ada', 'Grace', 'Ada']);
  });

  it('sends an invoice body equal to the one last marked when a newer one reached the engine since', async () => {
    rig = await stopAfterSecondWrite(INVOICE, invoice(3, '80.00'));
    await rig.accept(invoice(1, '80.00'));
    expect(await rig.settle([INVOICE])).toBe(true);
    await rig.accept(invoice(2, '95.00'));
    expect(await rig.settle([INVOICE])).toBe(true);

    expect(rig.crashed).toHaveLength(1);
    const items = rig.engine.transactions.get('api|INV-1')?.body.items as { unit_price: string }[];
    expect(items[0]?.unit_price).toBe('80');
  });
});
