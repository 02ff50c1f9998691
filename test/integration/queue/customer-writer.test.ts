import { describe, expect, it } from 'vitest';
import { CanonicalEvent, type InvoiceCustomer } from '../../../src/domain/events.js';
import { isTaxsyncError } from '../../../src/domain/errors.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { createCustomerWriters } from '../../../src/queue/customer-writer.js';
import { useQueueRig } from '../../helpers/queue-rig.js';
import { useRedis } from '../../helpers/redis.js';

const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-W' };
const facts = (tax_number: string): InvoiceCustomer => ({ external_id: 'C-W', name: 'Acme', tax_number });
const own = (t: number) =>
  CanonicalEvent.parse({ id: `own-${t}`, type: 'customer.upserted', occurred_at: new Date(Date.UTC(2026, 10, 1, 0, 0, t)).toISOString(), connector: 'erp', record: CUSTOMER, data: { name: 'Acme' } });

describe("a customer's writer lock", () => {
  const ctx = useRedis();
  const rig = useQueueRig(ctx);

  it('lets one writer at a time work; another waits for it, then gives up with a retryable RECORD_BUSY', async () => {
    const writers = createCustomerWriters(ctx.redis, rig.keys, { ttlMs: 5_000, waitMs: 150 });
    const first = await writers.take(CUSTOMER);
    const refused = await writers.take(CUSTOMER).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isTaxsyncError(refused) && refused.code === 'RECORD_BUSY' && refused.retryable).toBe(true);
    // Given back while the second one waits: it gets the lock.
    const waiting = writers.take(CUSTOMER);
    setTimeout(() => void first.release(), 50);
    const second = await waiting;
    await second.release();
  });

  it("keeps an invoice's facts only when they are newer than those held, and reads the customer's own newest time", async () => {
    const writers = createCustomerWriters(ctx.redis, rig.keys);
    await rig.producer.accept({ events: [own(5)] });
    await (await writers.take(CUSTOMER, { customer: facts('T-20'), atMs: 20_000 })).release();
    const older = await writers.take(CUSTOMER, { customer: facts('T-10'), atMs: 10_000 });
    expect(older.state.facts).toEqual({ customer: facts('T-20'), atMs: 20_000 });
    expect(older.state.ownAtMs).toBe(Date.UTC(2026, 10, 1, 0, 0, 5));
    await older.release();
    const newer = await writers.take(CUSTOMER, { customer: facts('T-30'), atMs: 30_000 });
    expect(newer.state.facts).toEqual({ customer: facts('T-30'), atMs: 30_000 });
    await newer.release();
  });

  it('keeps the hash of a write answered while the lock is held', async () => {
    const writers = createCustomerWriters(ctx.redis, rig.keys);
    const writer = await writers.take(CUSTOMER);
    await writer.sending();
    await writer.accepted('hash-1');
    expect((await writers.take(CUSTOMER)).state.sentHash).toBe('hash-1');
  });

  it("trusts no hash of a writer's generation once a holder lost its lock after its write went out", async () => {
    const writers = createCustomerWriters(ctx.redis, rig.keys, { ttlMs: 100, waitMs: 2_000 });
    const frozen = await writers.take(CUSTOMER);
    await frozen.sending();
    // Frozen past its lock: the next writer takes over and writes while the first write is on its way.
    frozen.abandon();
    const next = await writers.take(CUSTOMER);
    await next.sending();
    // The first write answers now: it may have landed after the next one's.
    const lost = await frozen.accepted('frozen').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isTaxsyncError(lost) && lost.code === 'RECORD_BUSY').toBe(true);
    await next.accepted('next');
    const after = await writers.take(CUSTOMER);
    expect(after.state.sentHash).toBeUndefined();
    await after.release();
  });
});
