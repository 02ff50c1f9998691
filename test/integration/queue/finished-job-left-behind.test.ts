import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { createRedis } from '../../../src/queue/connection.js';
import { createRequeuer } from '../../../src/queue/requeue.js';
import { customerVersion, useQueueRig } from '../../helpers/queue-rig.js';
import { useRedis } from '../../helpers/redis.js';

const RECORD: RecordKey = { kind: 'customer', source: 'api', external_id: 'left-behind' };
const version = (n: number) => customerVersion(RECORD, n);

/**
 * A record's job finished by a worker that does not remove it — during a rolling upgrade, a worker
 * of the release before record jobs became references (it reads only version-1 data, dead-letters
 * the job as JOB_INVALID and finishes it, and its jobs carried their own removal option) — must not
 * keep the record's id taken: every later event of the record would be stored and never sent.
 */
describe('a finished record job left behind', () => {
  const ctx = useRedis();
  const rig = useQueueRig(ctx);
  const requeuer = () => createRequeuer({ queues: rig.queues, records: rig.records });

  /** An old worker: finishes the job without applying anything and keeps it (no removal option). */
  async function finishLikeAnOldWorker(): Promise<void> {
    const queue = rig.queues.customers;
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
    await rig.producer.accept({ events: [version(1)] });
    await finishLikeAnOldWorker();
    // The next event is stored, but its job add is ignored: the finished job holds the id.
    expect((await rig.producer.accept({ events: [version(2)] })).outcomes).toEqual(['queued']);
    const id = recordKeyString(RECORD);
    expect(await rig.queues.customers.getJob(id).then((job) => job?.getState())).toBe('completed');
    expect(await rig.records.hasUnapplied(RECORD)).toBe(true);

    expect(await requeuer().hasPendingJob(RECORD)).toBe(false);
    expect(await requeuer().ensureQueued(RECORD)).toBe(true);
    expect(await rig.queues.customers.getJob(id).then((job) => job?.getState())).toBe('waiting');
    expect(await requeuer().hasPendingJob(RECORD)).toBe(true);
    // A waiting job is left alone.
    expect(await requeuer().ensureQueued(RECORD)).toBe(false);
    expect(await requeuer().sweep()).toBe(0);
  });

  it('is found by the periodic sweep', async () => {
    await rig.producer.accept({ events: [version(1)] });
    await finishLikeAnOldWorker();
    await rig.producer.accept({ events: [version(2)] });

    expect(await requeuer().sweep()).toBe(1);
    expect(await rig.queues.customers.getJob(recordKeyString(RECORD)).then((job) => job?.getState())).toBe('waiting');
  });
});
