import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { eventually } from '../../helpers/pipeline.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * A worker that is alive but loses its job's lock (its process frozen longer than the lock, or cut
 * off from Redis while it still reaches the API) keeps running the job, while BullMQ's stalled-job
 * check hands the job to another worker, which sends the newest state. The first worker's write,
 * of an older version, can reach the engine after that (a slow service, a long GC pause before the
 * request left): the engine must not end with the older version (invariant 2: the last call
 * carries the newest state).
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const INVOICE: RecordKey = { kind: 'transaction', source: 'api', external_id: 'INV-1' };
const invoice = (t: number, price: string) =>
  CanonicalEvent.parse({
    id: `i-${t}`,
    type: 'invoice.upserted',
    occurred_at: at(t),
    connector: 'erp',
    record: INVOICE,
    data: { number: 'INV-1', issued_at: at(0), status: 'active', currency: 'USD', tax_inclusive: false, lines: [{ id: '1', unit_price: price, quantity: '1' }] },
  });

describe('a job whose worker lost its lock while its write was on its way', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('never leaves the older version in the engine when that write lands after the newer one', async () => {
    // Two worker processes; locks of 400 ms. The first write of the invoice is held 2 s by the
    // service before it is applied.
    rig = await startModelRig(redis.url, { queues: ['transactions'], workers: 2, stalledIntervalMs: 400 });
    rig.engine.delays = (key, n) => (key === 'transaction|api|INV-1' && n === 0 ? 2_000 : 0);

    await rig.accept(invoice(1, '80.00'));
    await eventually(() => rig!.engine.api.requestsTo('PUT /v1/transactions/').length === 1);
    // The worker sending 80.00 loses its lock (as when its process stops for longer than the
    // lock); then the invoice changes to 95.00.
    await redis.redis.del(`${rig.prefix}:transactions:${recordKeyString(INVOICE)}:lock`);
    await rig.accept(invoice(2, '95.00'));

    // The job is taken over and sends 95.00; the late 80.00 lands after it.
    await eventually(() => rig!.engine.writes.filter((w) => w.key === 'transaction|api|INV-1').length >= 2, 10_000);
    await eventually(() => rig!.engine.api.requestsTo('PUT /v1/transactions/').length >= 2 && rig!.engine.writes.every((w) => w.applied), 10_000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await rig.settle([INVOICE])).toBe(true);

    const prices = rig.engine.writes.filter((w) => w.key === 'transaction|api|INV-1').map((w) => (w.body as { items: { unit_price: string }[] }).items[0]?.unit_price);
    // Whatever the order the writes were sent in, the engine ends with the newest state.
    expect(prices).toContain('95');
    const items = rig.engine.transactions.get('api|INV-1')?.body.items as { unit_price: string }[];
    expect(items[0]?.unit_price).toBe('95');
  });
});
