import { Job, type Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import { RECORD_JOB_VERSION, type RecordJobData } from './jobs.js';
import { BACKOFF_TYPE, policyFor, type RetryPolicies, type RetryPolicy } from './retry.js';

/**
 * The one way taxsync puts a record's job on a queue: the producer (webhooks, ingest, dead-letter
 * replay of deliveries), the requeuer and dead-letter replay of records all come here. The job id
 * IS the record key, so a record has at most one job: BullMQ ignores an add whose id exists, and a
 * waiting job reads the newest state when it runs (DESIGN.md invariant 2).
 */

/** Job options shared by every record job. */
export function recordJobOptions(recordKey: string, delayMs: number, retry: RetryPolicy) {
  return {
    jobId: recordKey,
    removeOnComplete: true,
    // Final failures are dead-lettered by the processor; a failed job must not block the id.
    removeOnFail: true,
    attempts: retry.attempts,
    backoff: { type: BACKOFF_TYPE },
    ...(delayMs > 0 ? { delay: delayMs } : {}),
  };
}

export interface EnqueueOptions {
  /** Delay before the job runs (the coalescing window). @defaultValue 0 */
  delayMs?: number;
  /** Attempts and backoff per kind (TAXSYNC_MAX_ATTEMPTS…). @defaultValue the built-in policy */
  retry?: RetryPolicy | RetryPolicies | undefined;
}

function jobOf(record: RecordKey, options: EnqueueOptions) {
  const recordKey = recordKeyString(record);
  const data: RecordJobData = { v: RECORD_JOB_VERSION, record };
  return { recordKey, data, opts: recordJobOptions(recordKey, options.delayMs ?? 0, policyFor(record.kind, options.retry)) };
}

/** Adds the record's job inside `multi`: queued with the rest of the transaction, or not at all. */
export function enqueueRecordIn(multi: ChainableCommander, queue: Queue, record: RecordKey, options: EnqueueOptions = {}): void {
  // The queue's connection must be the one `multi` runs on (ONE transaction spans the queues).
  const { recordKey, data, opts } = jobOf(record, options);
  void new Job(queue, record.kind, data, opts, recordKey).addJob(multi as never);
}

/** Adds the record's job now (the requeuer: a record that has unapplied events and lost its job). */
export async function enqueueRecord(queue: Queue, record: RecordKey, options: EnqueueOptions = {}): Promise<void> {
  const { data, opts } = jobOf(record, options);
  await queue.add(record.kind, data, opts);
}
