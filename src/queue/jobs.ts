import { z } from 'zod';
import { RecordKey } from '../domain/record-key.js';

export const RECORD_JOB_VERSION = 1;

/**
 * A record job carries only the record key: the processor reads the newest state from the
 * latest-state store, so a burst of updates needs one job (DESIGN.md invariant 2).
 */
export const RecordJobData = z.object({
  v: z.literal(RECORD_JOB_VERSION),
  record: RecordKey,
});
export type RecordJobData = z.infer<typeof RecordJobData>;
