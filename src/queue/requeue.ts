import type { Queue } from 'bullmq';
import { parseRecordKeyString, recordKeyString, type RecordKey } from '../domain/record-key.js';
import { queueForKind, type QueueName } from './names.js';
import { enqueueRecord } from './enqueue.js';
import type { RecordStore } from './record-state.js';
import type { RetryPolicies, RetryPolicy } from './retry.js';

export interface Requeuer {
  /** Adds the record's job when it has unapplied events and no job (BullMQ ignores an existing id). */
  ensureQueued(record: RecordKey): Promise<boolean>;
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
  async function ensureQueued(record: RecordKey): Promise<boolean> {
    if (!(await deps.records.hasUnapplied(record))) return false;
    const queue = deps.queues[queueForKind(record.kind)];
    if (await queue.getJob(recordKeyString(record))) return false;
    await enqueueRecord(queue, record, { retry: deps.retry });
    return true;
  }
  return {
    ensureQueued,
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
