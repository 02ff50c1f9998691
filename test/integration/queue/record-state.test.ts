import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys, type Keys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../../src/queue/record-state.js';
import { readTrace, type TraceSettings } from '../../../src/queue/trace.js';
import { useRedis } from '../../helpers/redis.js';

const RECORD: RecordKey = { kind: 'customer', source: 'api', external_id: 'c-1' };
const TRACE: TraceSettings = { maxEntries: 10, maxAgeMs: 60_000 };

function version(n: number): CanonicalEvent {
  return CanonicalEvent.parse({
    id: `e-${n}`,
    type: 'customer.upserted',
    occurred_at: `2026-11-20T10:00:0${n}Z`,
    connector: 'erp',
    record: RECORD,
    data: { name: `name ${n}` },
  });
}

describe('record state: markApplied', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;
  let records: RecordStore;
  let keys: Keys;

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
    keys = createKeys(ctx.prefix);
    producer = createProducer({
      queues,
      connection,
      keys,
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: TRACE,
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    records = createRecordStore(ctx.redis, keys);
  });

  afterEach(async () => {
    await closeQueues(queues);
    await connection.quit();
  });

  it('keeps the applied version, its fields and trace lines in order, and leaves the dirty set when nothing is newer', async () => {
    await producer.accept({ events: [version(1)] });
    await records.setFields(RECORD, { first_failed_at: '2026-11-20T10:00:00Z' });
    const state = await records.read(RECORD);
    expect(await records.hasUnapplied(RECORD)).toBe(true);

    const newer = await records.markApplied(RECORD, state.seq, state.event, new Date('2026-11-20T10:01:00Z'), {
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
    const after = await records.read(RECORD);
    expect(after.appliedSeq).toBe(state.seq);
    expect(after.appliedEvent).toEqual(version(1));
    expect(after.taxId).toBe('tx-1');
    expect(after.firstFailedAt).toBeUndefined();
    expect(await records.hasUnapplied(RECORD)).toBe(false);
    expect(await ctx.redis.sismember(keys.dirty, recordKeyString(RECORD))).toBe(0);
    const steps = (await readTrace(ctx.redis, keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps).toEqual(['received', 'sent', 'answered']);
  });

  it('records the version that was sent, not the newer one that replaced it meanwhile, and says what is newer', async () => {
    await producer.accept({ events: [version(1)] });
    const sent = await records.read(RECORD);
    await producer.accept({ events: [version(2)] });

    const newer = await records.markApplied(RECORD, sent.seq, sent.event, new Date(), {
      trace: { entries: [{ at: '2026-11-20T10:01:00Z', step: 'answered', event_id: 'e-1' }], settings: TRACE },
    });

    expect(newer).toBe(sent.seq + 1);
    const after = await records.read(RECORD);
    expect(after.appliedSeq).toBe(sent.seq);
    expect(after.appliedEvent).toEqual(version(1));
    expect(after.event).toEqual(version(2));
    expect(await records.hasUnapplied(RECORD)).toBe(true);
    expect(await ctx.redis.sismember(keys.dirty, recordKeyString(RECORD))).toBe(1);
    // The trace line is written once, by the call that applied.
    const steps = (await readTrace(ctx.redis, keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps).toEqual(['received', 'received', 'answered']);
  });

  it("runs a handler's writes once when a newer version replaced the one sent meanwhile (a counter among them counts once)", async () => {
    await producer.accept({ events: [version(1)] });
    const sent = await records.read(RECORD);
    await producer.accept({ events: [version(2)] });
    const counter = `${ctx.prefix}:test-counter`;

    // The first mark finds v2 held (it answers -seq) and the event sent is passed in a second call.
    const newer = await records.markApplied(RECORD, sent.seq, sent.event, new Date(), { also: (multi) => void multi.hincrby(counter, 'n', 1) });

    expect(newer).toBe(sent.seq + 1);
    expect((await records.read(RECORD)).appliedEvent).toEqual(version(1));
    expect(await ctx.redis.hget(counter, 'n')).toBe('1');
  });

  it('ignores the late mark of a job that was taken over: the newer applied version and its event stay', async () => {
    await producer.accept({ events: [version(1)] });
    const stalled = await records.read(RECORD); // a job reads v1, then stalls
    await producer.accept({ events: [version(2)] });
    const takenOver = await records.read(RECORD); // the job that took over sends v2 and marks it
    expect(await records.markApplied(RECORD, takenOver.seq, takenOver.event, new Date())).toBe(0);

    const late = await records.markApplied(RECORD, stalled.seq, stalled.event, new Date(), {
      eventJson: stalled.eventJson!,
      trace: { entries: [{ at: '2026-11-20T10:01:00Z', step: 'answered', event_id: 'e-1' }], settings: TRACE },
    });

    expect(late).toBe(0);
    const after = await records.read(RECORD);
    expect(after.appliedSeq).toBe(takenOver.seq);
    expect(after.event).toEqual(version(2));
    expect(after.appliedEvent).toEqual(version(2));
    expect(await records.hasUnapplied(RECORD)).toBe(false);
    // What the late job did still shows in the trace.
    const steps = (await readTrace(ctx.redis, keys, recordKeyString(RECORD))).map((e) => e.step);
    expect(steps.at(-1)).toBe('answered');
  });

  it('keeps a newest event apart from the state hash until it is applied, then holds one copy of it', async () => {
    await producer.accept({ events: [version(1)] });
    const rk = recordKeyString(RECORD);
    expect(await ctx.redis.exists(keys.event(rk))).toBe(1);
    expect(await ctx.redis.hget(keys.state(rk), 'event')).toBeNull();
    const state = await records.read(RECORD);
    await records.markApplied(RECORD, state.seq, state.event, new Date());
    expect(await ctx.redis.exists(keys.event(rk))).toBe(0);
    const after = await records.read(RECORD);
    expect(after.event).toEqual(version(1));
    expect(after.appliedEvent).toEqual(version(1));
  });

  it('reads and moves on state written with the events inside the hash (the layout before the event keys)', async () => {
    const rk = recordKeyString(RECORD);
    await ctx.redis.hset(keys.state(rk), {
      seq: '2',
      applied_seq: '1',
      event_id: 'e-2',
      event_at: String(Date.parse(version(2).occurred_at)),
      event: JSON.stringify(version(2)),
      applied_event: JSON.stringify(version(1)),
    });
    const state = await records.read(RECORD);
    expect(state.event).toEqual(version(2));
    expect(state.appliedEvent).toEqual(version(1));

    expect(await records.markApplied(RECORD, state.seq, state.event, new Date())).toBe(0);
    const after = await records.read(RECORD);
    expect(after.event).toEqual(version(2));
    expect(after.appliedEvent).toEqual(version(2));
    expect(await ctx.redis.hmget(keys.state(rk), 'event', 'applied_event')).toEqual([null, null]);
  });
});
