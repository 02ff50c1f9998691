import type { Queue } from 'bullmq';
import { parseRecordKeyString, recordKeyString, type RecordKey } from '../domain/record-key.js';
import { queueForKind, type QueueName } from './names.js';
import { enqueueRecord } from './enqueue.js';
import type { RecordStore } from './record-state.js';
import type { RetryPolicies, RetryPolicy } from './retry.js';

export interface Requeuer {
  /** Adds the record's job when it has unapplied events and no job (BullMQ ignores an existing id). */
  ensureQueued(record: RecordKey): Promise<boolean>;
  /** True when the record has a job that will still run (waiting, delayed, active): a finished job left behind does not count. */
  hasPendingJob(record: RecordKey): Promise<boolean>;
  /** Walks the dirty set and re-queues every record that lost its job. Returns how many were re-queued. */
  sweep(): Promise<number>;
}

/**
 * Closes the one window coalescing leaves open: an event stored after a job's last check but
 * before BullMQ removed the finished job finds the job id still taken, so no new job is added.
 * Workers call ensureQueued when a job completes, and sweep periodically (also covering a crash
 * between storing an event and anything else).
 */
export function createRequeuer(deps: {
  queues: Readonly<Record<QueueName, Queue>>;
  records: RecordStore;
  retry?: RetryPolicy | RetryPolicies;
}): Requeuer {
  /**
   * The record's job unless it has finished. A finished job is normally removed as it finishes (the
   * record workers' removeOnComplete / removeOnFail), but one finished by a worker that does not
   * remove it — a worker of the release before jobs became references (version 2), during a
   * rolling upgrade — would keep the record's id taken for ever, and every later event of the
   * record would find "a job" and never be sent. Such a job is removed here so the record's job can
   * be added again.
   */
  async function pendingJob(record: RecordKey): Promise<boolean> {
    const queue = deps.queues[queueForKind(record.kind)];
    const job = await queue.getJob(recordKeyString(record));
    if (!job) return false;
    const state = await job.getState();
    if (state !== 'completed' && state !== 'failed') return true;
    // A finished job holds no lock; if it vanished meanwhile, that is the same outcome.
    await job.remove().catch(() => undefined);
    return false;
  }
  async function ensureQueued(record: RecordKey): Promise<boolean> {
    if (!(await deps.records.hasUnapplied(record))) return false;
    if (await pendingJob(record)) return false;
    await enqueueRecord(deps.queues[queueForKind(record.kind)], record, { retry: deps.retry });
    return true;
  }
  return {
    ensureQueued,
    hasPendingJob: pendingJob,
    async sweep() {
      let cursor = '0';
      let requeued = 0;
      do {
        const [next, members] = await deps.records.dirty(cursor, 200);
        cursor = next;
        for (const member of members) {
          let record: RecordKey;
          try {
            record = parseRecordKeyString(member);
          } catch {
            continue;
          }
          if (await ensureQueued(record)) requeued += 1;
        }
      } while (cursor !== '0');
      return requeued;
    },
  };
}
