import type { Queue } from 'bullmq';
import type { AuditLog } from './audit.js';
import type { RedisClient } from './connection.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Keys } from './keys.js';
import { queueForKind, type QueueName } from './names.js';
import { withScripts } from './redis-scripts.js';
import { replayRecord } from './replay.js';
import type { RetryPolicies, RetryPolicy } from './retry.js';
import type { TraceSettings } from './trace.js';

export interface ResendDeps {
  queues: Readonly<Record<QueueName, Queue>>;
  keys: Keys;
  audit: AuditLog;
  trace: TraceSettings;
  retry?: RetryPolicy | RetryPolicies;
  clock?: () => Date;
}

export type ResendOutcome = 'queued' | 'unknown';

/**
 * `taxsync resend`: the record's newest version is marked not applied and its job queued, with a
 * trace line and an audit line, in ONE transaction. The replay mark clears the record's
 * `sent_hash`, so the body is sent even when it equals the one last accepted (skip unchanged is
 * for new events, never for an operator who asks). Returns `unknown` when taxsync holds no event
 * for the record. VAT submissions are not resent this way: their ledger decides (docs/vat.md).
 */
export async function resendRecord(
  deps: ResendDeps,
  record: RecordKey,
  /** What asked for it (`taxsync reconcile replay`): the trace line's text and a note on the audit line. */
  why: { trace: string; note?: string } = { trace: `resent by ${deps.audit.actor} (taxsync resend: sent even when unchanged)` },
): Promise<ResendOutcome> {
  const clock = deps.clock ?? (() => new Date());
  const recordKey = recordKeyString(record);
  const queue = deps.queues[queueForKind(record.kind)];
  const client = withScripts((await queue.backend.client) as unknown as RedisClient);
  if (Number((await client.hget(deps.keys.state(recordKey), 'seq')) ?? 0) <= 0) return 'unknown';
  // The latest state, whichever version (no event id), like `dlq replay --remap`.
  await replayRecord(
    { queue, keys: deps.keys, trace: deps.trace, retry: deps.retry },
    {
      record,
      trace: { at: clock().toISOString(), step: 'replayed', detail: why.trace },
      also: (multi) => deps.audit.appendTo(multi, { action: 'resend', ids: [recordKey], count: 1, outcome: `${record.kind} ${record.source}/${record.external_id} queued${why.note === undefined ? '' : ` (${why.note})`}` }),
    },
  );
  return 'queued';
}
