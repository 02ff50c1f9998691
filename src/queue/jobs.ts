import { z } from 'zod';
import { describeIssues } from '../domain/field-errors.js';
import { parseRecordKeyString, RecordKey } from '../domain/record-key.js';

export const RECORD_JOB_VERSION = 2;

/**
 * A record job carries no payload: the processor reads the newest state from the latest-state
 * store, so a burst of updates needs one job (DESIGN.md invariant 2). Version 2 holds only its
 * version, the job id being the record key (src/queue/enqueue.ts); version 1 (before issue 17's
 * memory pass) also carried the record, and is still read. Every value of a job's hash stays under
 * Redis's 64-byte compact-encoding limit, which keeps the hash about a third of the size.
 */
export const RecordJobData = z.object({
  v: z.union([z.literal(1), z.literal(RECORD_JOB_VERSION)]),
  /** Version 1 only. */
  record: RecordKey.optional(),
});
export type RecordJobData = z.infer<typeof RecordJobData>;

type JobLike = { id?: string | undefined; data: unknown };

// The processor and the worker's 'completed' listener both ask, for the same job object.
const known = new WeakMap<JobLike, { record: RecordKey }>();

/** The record a job is for, or what is wrong with it (one line). */
export function recordOfJob(job: JobLike): { record: RecordKey } | { problem: string } {
  const cached = known.get(job);
  if (cached) return cached;
  const read = readRecordOfJob(job);
  if ('record' in read) known.set(job, read);
  return read;
}

function readRecordOfJob(job: JobLike): { record: RecordKey } | { problem: string } {
  const data = RecordJobData.safeParse(job.data);
  if (!data.success) {
    // One line (an entry's message is a table cell in `dlq list`): zod's own message is a JSON dump.
    return { problem: describeIssues(data.error.issues, { whole: '(data)' }) };
  }
  if (data.data.record) return { record: data.data.record };
  if (data.data.v === 1) return { problem: 'record: Required' };
  try {
    return { record: parseRecordKeyString(job.id ?? '') };
  } catch {
    return { problem: `the job id ${JSON.stringify(job.id ?? '')} is not a record key` };
  }
}
