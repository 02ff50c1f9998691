import { describe, expect, it } from 'vitest';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { customerVersion, useQueueRig } from '../../helpers/queue-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * The job's own read of a record whose newest event its handler always writes as held (an invoice
 * or a customer upsert) does sending()'s work in the same Redis call: the hash of the body last
 * accepted is cleared and the version becomes the applied copy before the write goes out, one
 * round trip fewer per write (src/queue/redis-scripts.ts, READ_STATE).
 */
describe('the job read that also does sending()', () => {
  const ctx = useRedis();
  const rig = useQueueRig(ctx);
  const RECORD = { kind: 'customer' as const, source: 'api', external_id: 'C-SEND' };
  const keyOf = () => recordKeyString(RECORD);
  const now = Date.UTC(2026, 10, 27, 12, 0, 0);
  const at = (over: Partial<{ types: string[]; windowMs: number; latestMs: number; nowMs: number }> = {}) => ({
    types: ['customer.upserted'],
    nowMs: now,
    windowMs: 0,
    latestMs: now,
    ...over,
  });

  /** Version 1 applied with a hash, version 2 held: the state a job finds. */
  async function appliedThenNewer(receivedGapMs = 60_000): Promise<void> {
    const clock = { t: now - 2 * receivedGapMs };
    const producer = rig.producerWith({ clock: () => new Date(clock.t) });
    await producer.accept({ events: [customerVersion(RECORD, 1)] });
    const first = await rig.records.read(RECORD);
    await rig.records.markApplied(RECORD, first.seq, first.event, new Date(clock.t), { fields: { sent_hash: 'hash-of-v1' } });
    clock.t += receivedGapMs;
    await producer.accept({ events: [customerVersion(RECORD, 2)] });
  }

  it('clears the hash and makes the newest version the applied copy, answering what was held before', async () => {
    await appliedThenNewer();
    const state = await rig.records.read(RECORD, at());
    expect(state).toMatchObject({ sendingDone: true, sentHash: 'hash-of-v1', seq: 2, appliedSeq: 1 });
    expect(state.appliedEvent?.id).toBe(customerVersion(RECORD, 1).id);
    expect(await ctx.redis.hget(rig.keys.state(keyOf()), 'sent_hash')).toBeNull();
    expect(JSON.parse((await ctx.redis.get(rig.keys.applied(keyOf())))!)).toMatchObject({ id: customerVersion(RECORD, 2).id });
    // What the next read sees: version 2 is the copy, nothing trusted about the body.
    expect(await rig.records.read(RECORD)).toMatchObject({ sentHash: undefined });
    expect((await rig.records.read(RECORD)).appliedEvent?.id).toBe(customerVersion(RECORD, 2).id);
  });

  it('does nothing for an event type its handler does not always write as held', async () => {
    await appliedThenNewer();
    const state = await rig.records.read(RECORD, at({ types: ['invoice.upserted'] }));
    expect(state.sendingDone).toBeUndefined();
    expect(await ctx.redis.hget(rig.keys.state(keyOf()), 'sent_hash')).toBe('hash-of-v1');
    expect((await rig.records.read(RECORD)).appliedEvent?.id).toBe(customerVersion(RECORD, 1).id);
  });

  it('does nothing while the record is in a burst (its job waits for it to go quiet), and does it once the window has passed', async () => {
    // Version 2 arrived 50 ms after version 1, within a 200 ms window: in a burst until 200 ms after it.
    await appliedThenNewer(50);
    const receivedAt = now - 50;
    const inBurst = await rig.records.read(RECORD, at({ windowMs: 200, nowMs: receivedAt + 100, latestMs: receivedAt + 5_000 }));
    expect(inBurst.sendingDone).toBeUndefined();
    expect(await ctx.redis.hget(rig.keys.state(keyOf()), 'sent_hash')).toBe('hash-of-v1');
    const quiet = await rig.records.read(RECORD, at({ windowMs: 200, nowMs: receivedAt + 201, latestMs: receivedAt + 5_000 }));
    expect(quiet.sendingDone).toBe(true);
  });

  it('does nothing once the newest version is applied', async () => {
    await rig.producer.accept({ events: [customerVersion(RECORD, 1)] });
    const first = await rig.records.read(RECORD);
    await rig.records.markApplied(RECORD, first.seq, first.event, new Date(now), { fields: { sent_hash: 'hash-of-v1' } });
    const state = await rig.records.read(RECORD, at());
    expect(state.sendingDone).toBeUndefined();
    expect(await ctx.redis.hget(rig.keys.state(keyOf()), 'sent_hash')).toBe('hash-of-v1');
  });
});
