import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { withScripts } from '../../../src/queue/redis-scripts.js';
import { readTrace } from '../../../src/queue/trace.js';
import { customerVersion, RIG_TRACE as TRACE, useQueueRig } from '../../helpers/queue-rig.js';
import { useRedis } from '../../helpers/redis.js';

const RECORD: RecordKey = { kind: 'customer', source: 'api', external_id: 'c-1' };
const version = (n: number): CanonicalEvent => customerVersion(RECORD, n);

describe('record state: markApplied', () => {
  const ctx = useRedis();
  const rig = useQueueRig(ctx);

  it('keeps the applied version, its fields and trace lines in order, and leaves the dirty set when nothing is newer', async () => {
    await rig.producer.accept({ events: [version(1)] });
    await rig.records.setFields(RECORD, { first_failed_at: '2026-11-20T10:00:00Z' });
    const state = await rig.records.read(RECORD);
    expect(await rig.records.hasUnapplied(RECORD)).toBe(true);

    const newer = await rig.records.markApplied(RECORD, state.seq, state.event, new Date('2026-11-20T10:01:00Z'), {
      fields: { tax_id: 'tx-1', first_failed_at: null },
      trace: {
        entries: [
          { at: '2026-11-20T10:00:59Z', step: 'sent', event_id: 'e-1' },
          { at: '2026-11-20T10:01:00Z', step: 'answered', event_id: 'e-1', status: 200 },
        ],
        settings: TRACE,
      },
    });

    expect(newer).toBe(0);
    const after = await rig.records.read(RECORD);
    expect(after.appliedSeq).toBe(state.seq);
    expect(after.appliedEvent).toEqual(version(1));
    expect(after.taxId).toBe('tx-1');
    expect(after.firstFailedAt).toBeUndefined();
    expect(await rig.records.hasUnapplied(RECORD)).toBe(false);
    expect(await ctx.redis.sismember(rig.keys.dirty, recordKeyString(RECORD))).toBe(0);
    const steps = (await readTrace(ctx.redis, rig.keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps).toEqual(['received', 'sent', 'answered']);
  });

  it('records the version that was sent, not the newer one that replaced it meanwhile, and says what is newer', async () => {
    await rig.producer.accept({ events: [version(1)] });
    const sent = await rig.records.read(RECORD);
    await rig.producer.accept({ events: [version(2)] });

    const newer = await rig.records.markApplied(RECORD, sent.seq, sent.event, new Date(), {
      trace: { entries: [{ at: '2026-11-20T10:01:00Z', step: 'answered', event_id: 'e-1' }], settings: TRACE },
    });

    expect(newer).toBe(sent.seq + 1);
    const after = await rig.records.read(RECORD);
    expect(after.appliedSeq).toBe(sent.seq);
    expect(after.appliedEvent).toEqual(version(1));
    expect(after.event).toEqual(version(2));
    expect(await rig.records.hasUnapplied(RECORD)).toBe(true);
    expect(await ctx.redis.sismember(rig.keys.dirty, recordKeyString(RECORD))).toBe(1);
    // The trace line is written once, by the call that applied.
    const steps = (await readTrace(ctx.redis, rig.keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps).toEqual(['received', 'received', 'answered']);
  });

  it("runs a handler's writes once when a newer version replaced the one sent meanwhile (a counter among them counts once)", async () => {
    await rig.producer.accept({ events: [version(1)] });
    const sent = await rig.records.read(RECORD);
    await rig.producer.accept({ events: [version(2)] });
    const counter = `${ctx.prefix}:test-counter`;

    // The first mark finds v2 held (it answers -seq) and the event sent is passed in a second call.
    const newer = await rig.records.markApplied(RECORD, sent.seq, sent.event, new Date(), { also: (multi) => void multi.hincrby(counter, 'n', 1) });

    expect(newer).toBe(sent.seq + 1);
    expect((await rig.records.read(RECORD)).appliedEvent).toEqual(version(1));
    expect(await ctx.redis.hget(counter, 'n')).toBe('1');
  });

  it("runs a handler's writes, on its own keys and on the record's state, in the same step as the mark", async () => {
    await rig.producer.accept({ events: [version(1)] });
    const state = await rig.records.read(RECORD);
    const other = `${ctx.prefix}:test-hash`;
    await ctx.redis.hset(other, 'gone', 'x');
    const stateKey = rig.keys.state(recordKeyString(RECORD));

    const newer = await rig.records.markApplied(RECORD, state.seq, state.event, new Date(), {
      fields: { tax_id: 'tx-9' },
      also: (writes) => {
        writes.hset(stateKey, 'variance_basis', '{"engine_id":"tx-9","computed":"1.00"}');
        writes.hset(other, 'entry', 'a b c');
        writes.hdel(other, 'gone');
        writes.hincrby(other, 'count', 2);
      },
    });

    expect(newer).toBe(0);
    const after = await rig.records.read(RECORD);
    expect(after.appliedSeq).toBe(state.seq);
    expect(after.taxId).toBe('tx-9');
    expect(await ctx.redis.hget(stateKey, 'variance_basis')).toBe('{"engine_id":"tx-9","computed":"1.00"}');
    expect(await ctx.redis.hgetall(other)).toEqual({ entry: 'a b c', count: '2' });
  });

  it('refuses a write the mark does not run before it marks or writes anything', async () => {
    await rig.producer.accept({ events: [version(1)] });
    const state = await rig.records.read(RECORD);
    const stateKey = rig.keys.state(recordKeyString(RECORD));
    const other = `${ctx.prefix}:test-hash`;
    const key = recordKeyString(RECORD);
    const scripted = withScripts(ctx.redis);
    // The mark's six keys and the write's key; an HSET that may run, then a DEL that may not.
    const call = scripted.taxsyncMarkAppliedWith(
      7,
      stateKey,
      rig.keys.dirty,
      rig.keys.trace(key),
      rig.keys.event(key),
      rig.keys.applied(key),
      stateKey,
      other,
      8,
      'HSET',
      7,
      2,
      'f',
      'v',
      'DEL',
      7,
      0,
      ...[state.seq, Date.parse(state.event!.occurred_at), state.event!.id, key, Date.now(), '=', 0, 0, 0, 0, ''],
    );

    await expect(call).rejects.toThrow(/not a write the mark runs: DEL/);
    expect((await rig.records.read(RECORD)).appliedSeq).toBe(0);
    expect(await ctx.redis.exists(other)).toBe(0);
  });

  it('ignores the late mark of a job that was taken over: the newer applied version and its event stay', async () => {
    await rig.producer.accept({ events: [version(1)] });
    const stalled = await rig.records.read(RECORD); // a job reads v1, then stalls
    await rig.producer.accept({ events: [version(2)] });
    const takenOver = await rig.records.read(RECORD); // the job that took over sends v2 and marks it
    expect(await rig.records.markApplied(RECORD, takenOver.seq, takenOver.event, new Date())).toBe(0);

    const late = await rig.records.markApplied(RECORD, stalled.seq, stalled.event, new Date(), {
      eventJson: stalled.eventJson!,
      trace: { entries: [{ at: '2026-11-20T10:01:00Z', step: 'answered', event_id: 'e-1' }], settings: TRACE },
    });

    expect(late).toBe(0);
    const after = await rig.records.read(RECORD);
    expect(after.appliedSeq).toBe(takenOver.seq);
    expect(after.event).toEqual(version(2));
    expect(after.appliedEvent).toEqual(version(2));
    expect(await rig.records.hasUnapplied(RECORD)).toBe(false);
    // What the late job did still shows in the trace.
    const steps = (await readTrace(ctx.redis, rig.keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps.at(-1)).toBe('answered');
  });

  it('keeps a newest event apart from the state hash until it is applied, then holds one copy of it', async () => {
    await rig.producer.accept({ events: [version(1)] });
    const rk = recordKeyString(RECORD);
    expect(await ctx.redis.exists(rig.keys.event(rk))).toBe(1);
    expect(await ctx.redis.hget(rig.keys.state(rk), 'event')).toBeNull();
    const state = await rig.records.read(RECORD);
    await rig.records.markApplied(RECORD, state.seq, state.event, new Date());
    expect(await ctx.redis.exists(rig.keys.event(rk))).toBe(0);
    const after = await rig.records.read(RECORD);
    expect(after.event).toEqual(version(1));
    expect(after.appliedEvent).toEqual(version(1));
  });

  it('reads and moves on state written with the events inside the hash (the layout before the event keys)', async () => {
    const rk = recordKeyString(RECORD);
    await ctx.redis.hset(rig.keys.state(rk), {
      seq: '2',
      applied_seq: '1',
      event_id: 'e-2',
      event_at: String(Date.parse(version(2).occurred_at)),
      event: JSON.stringify(version(2)),
      applied_event: JSON.stringify(version(1)),
    });
    const state = await rig.records.read(RECORD);
    expect(state.event).toEqual(version(2));
    expect(state.appliedEvent).toEqual(version(1));

    expect(await rig.records.markApplied(RECORD, state.seq, state.event, new Date())).toBe(0);
    const after = await rig.records.read(RECORD);
    expect(after.event).toEqual(version(2));
    expect(after.appliedEvent).toEqual(version(2));
    expect(await ctx.redis.hmget(rig.keys.state(rk), 'event', 'applied_event')).toEqual([null, null]);
  });
});
