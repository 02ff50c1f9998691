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

/**
 * Job options shared by every record job, kept to what differs from BullMQ's defaults: BullMQ
 * stores them in the job's hash, and over 64 bytes the hash loses Redis's compact encoding (about
 * 450 bytes more per pending record). The id is passed beside them, not in them, and the removal
 * of finished jobs is the record workers' option (src/queue/worker.ts), not each job's.
 */
function recordJobOptions(delayMs: number, retry: RetryPolicy) {
  return {
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

// The record is the job's id (recordOfJob reads it back): the data is only the version.
const DATA: RecordJobData = { v: RECORD_JOB_VERSION };

function jobOf(queue: Queue, record: RecordKey, options: EnqueueOptions): Job {
  const opts = recordJobOptions(options.delayMs ?? 0, policyFor(record.kind, options.retry));
  return new Job(queue, record.kind, DATA, opts, recordKeyString(record));
}

/** Adds the record's job inside `multi`: queued with the rest of the transaction, or not at all. */
export function enqueueRecordIn(multi: ChainableCommander, queue: Queue, record: RecordKey, options: EnqueueOptions = {}): void {
  // The queue's connection must be the one `multi` runs on (ONE transaction spans the queues).
  void jobOf(queue, record, options).addJob(multi as never);
}

/** Adds the record's job now (the requeuer: a record that has unapplied events and lost its job). */
export async function enqueueRecord(queue: Queue, record: RecordKey, options: EnqueueOptions = {}): Promise<void> {
  await jobOf(queue, record, options).addJob(await queue.backend.client);
}
