import { Worker, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../../src/queue/record-state.js';
import { createRequeuer, type Requeuer } from '../../../src/queue/requeue.js';
import { useRedis } from '../../helpers/redis.js';

const RECORD: RecordKey = { kind: 'customer', source: 'api', external_id: 'left-behind' };

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

/**
 * A record's job finished by a worker that does not remove it — during a rolling upgrade, a worker
 * of the release before record jobs became references (it reads only version-1 data, dead-letters
 * the job as JOB_INVALID and finishes it, and its jobs carried their own removal option) — must not
 * keep the record's id taken: every later event of the record would be stored and never sent.
 */
describe('a finished record job left behind', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;
  let records: RecordStore;
  let requeuer: Requeuer;

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
    const keys = createKeys(ctx.prefix);
    producer = createProducer({ queues, connection, keys, deadLetters: createDeadLetterStore(queues['dead-letter']), trace: { maxEntries: 10, maxAgeMs: 60_000 }, deliveryTtlMs: 60_000, coalesceDelayMs: 0 });
    records = createRecordStore(ctx.redis, keys);
    requeuer = createRequeuer({ queues, records });
  });

  afterEach(async () => {
    await closeQueues(queues);
    await connection.quit();
  });

  /** An old worker: finishes the job without applying anything and keeps it (no removal option). */
  async function finishLikeAnOldWorker(): Promise<void> {
    const queue = queues.customers;
    const worker = new Worker(queue.name, async () => 'dead-lettered JOB_INVALID', { connection: createRedis(ctx.url, 'worker'), prefix: ctx.prefix, autorun: true });
    try {
      const id = recordKeyString(RECORD);
      const deadline = Date.now() + 20_000;
      while ((await queue.getJob(id).then((job) => job?.getState())) !== 'completed') {
        if (Date.now() > deadline) throw new Error('the old worker did not finish the job');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await worker.close();
      await (worker.opts.connection as Redis).quit();
    }
  }

  it('is removed and the record queued again by the check after a job and by the sweep', async () => {
    await producer.accept({ events: [version(1)] });
    await finishLikeAnOldWorker();
    // The next event is stored, but its job add is ignored: the finished job holds the id.
    expect((await producer.accept({ events: [version(2)] })).outcomes).toEqual(['queued']);
    const id = recordKeyString(RECORD);
    expect(await queues.customers.getJob(id).then((job) => job?.getState())).toBe('completed');
    expect(await records.hasUnapplied(RECORD)).toBe(true);

    expect(await requeuer.hasPendingJob(RECORD)).toBe(false);
    expect(await requeuer.ensureQueued(RECORD)).toBe(true);
    expect(await queues.customers.getJob(id).then((job) => job?.getState())).toBe('waiting');
    expect(await requeuer.hasPendingJob(RECORD)).toBe(true);
    // A waiting job is left alone.
    expect(await requeuer.ensureQueued(RECORD)).toBe(false);
    expect(await requeuer.sweep()).toBe(0);
  });

  it('is found by the periodic sweep', async () => {
    await producer.accept({ events: [version(1)] });
    await finishLikeAnOldWorker();
    await producer.accept({ events: [version(2)] });

    expect(await requeuer.sweep()).toBe(1);
    expect(await queues.customers.getJob(recordKeyString(RECORD)).then((job) => job?.getState())).toBe('waiting');
  });
});
