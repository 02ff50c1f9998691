import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../../src/domain/events.js';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import { runReconcile, type ReconcileDeps } from '../../../src/reconcile/run.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19, item 4 of the brief: a customer taxsync upserted inline — an invoice's customer, sent
 * by the invoice's job (customerFirst) — has no record of its own, yet it is taxsync's: reconcile
 * counts it as known, not as "extra" in the engine. Also when the invoice that carried it was
 * later cancelled or deleted. A customer in the engine that no invoice carried stays extra.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const SHIP_TO = { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' };

function event(input: Omit<CanonicalEventInput, 'connector' | 'occurred_at' | 'id'> & { version: number }): CanonicalEvent {
  const { version, ...rest } = input;
  return CanonicalEvent.parse({ ...rest, id: `evt-${rest.record.external_id}-${version}`, connector: 'test', occurred_at: new Date(BASE + version * 1000).toISOString() });
}

const invoice = (id: string, customer: string) =>
  event({
    version: 1,
    type: 'invoice.upserted',
    record: { kind: 'transaction', source: 'api', external_id: id },
    data: {
      number: id.toUpperCase(),
      issued_at: new Date(BASE).toISOString(),
      status: 'paid',
      currency: 'USD',
      tax_inclusive: false,
      customer: { external_id: customer, name: `Customer of ${id}`, tax_exempt: true, addresses: { billing: SHIP_TO } },
      addresses: { shipping: SHIP_TO },
      lines: [{ id: '1', name: 'item', unit_price: '25.00', quantity: '2' }],
    },
  });

describe('taxsync reconcile and customers upserted inline by invoices', () => {
  const ctx = useRedis();
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let pipeline: Pipeline;
  let deps: ReconcileDeps;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    const refunds = createRefundLedger(pipeline.producerConnection, pipeline.keys);
    const settings = DEFAULT_SETTINGS.mapping;
    await pipeline.startWorker('transactions', createTransactionHandler({ tax: api.tax, records: pipeline.records, ledger: refunds, settings }));
    await pipeline.startWorker('customers', createCustomerHandler({ tax: api.tax, settings }));
    deps = { redis: pipeline.producerConnection, keys: pipeline.keys, records: pipeline.records, refunds, tax: api.tax, settings };
  });
  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  async function send(events: CanonicalEvent[]): Promise<void> {
    for (const e of events) {
      await pipeline.producer.accept({ events: [e] });
      await eventually(async () => {
        const state = await pipeline.records.read(e.record);
        return state.seq > 0 && state.appliedSeq >= state.seq;
      }, 30_000);
    }
  }

  it('counts an invoice\'s inline customer as known, also after the invoice was cancelled or deleted; a stranger stays extra', async () => {
    await send([invoice('inv-kept', 'cus-kept'), invoice('inv-cancelled', 'cus-cancelled'), invoice('inv-deleted', 'cus-deleted')]);
    for (const id of ['cus-kept', 'cus-cancelled', 'cus-deleted']) expect((await api.tax.customers.getByKey('api', id)).customer_type).toBe('retail_exempt');
    await send([
      event({ version: 2, type: 'invoice.cancelled', record: { kind: 'transaction', source: 'api', external_id: 'inv-cancelled' }, data: {} }),
      event({ version: 2, type: 'invoice.deleted', record: { kind: 'transaction', source: 'api', external_id: 'inv-deleted' }, data: {} }),
    ]);
    await api.tax.customers.upsert({ source: 'api', external_id: 'cus-stranger', name: 'Nobody taxsync knows', customer_type: 'retail' } as never);

    const report = await runReconcile(deps, { pageSize: 2 });
    expect(report.findings.map((f) => `${f.kind} ${f.record.kind} ${f.record.external_id}`)).toEqual(['extra customer cus-stranger']);
    expect(report.summary).toMatchObject({ extra: 1, missing: 0, differing: 0, engine_customers: 4 });
  });
});
