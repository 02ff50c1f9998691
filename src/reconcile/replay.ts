import { recordKeyString } from '../domain/record-key.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { RecordStore } from '../queue/record-state.js';
import type { Requeuer } from '../queue/requeue.js';
import { appendTrace, type TraceSettings } from '../queue/trace.js';
import type { Finding } from './compare.js';

export interface ReplayDeps {
  redis: RedisClient;
  keys: Keys;
  records: Pick<RecordStore, 'reopen'>;
  requeuer: Pick<Requeuer, 'ensureQueued'>;
  trace: TraceSettings;
  clock?: () => Date;
}

export interface ReplayedFinding {
  finding: Finding;
  outcome: 'queued' | 'skipped';
  detail: string;
}

/**
 * `taxsync reconcile replay <report>`: each mismatch of a report is sent again from taxsync's
 * latest state (re-mapped by its own job, like `dlq replay --remap`): the record's newest version
 * is marked not applied and its job queued. An engine record taxsync holds nothing of cannot be
 * re-mapped: it is listed, and left to the operator.
 */
export async function replayFindings(deps: ReplayDeps, report: { run_id: string; findings: readonly Finding[] }, actor: string): Promise<ReplayedFinding[]> {
  const clock = deps.clock ?? (() => new Date());
  const out: ReplayedFinding[] = [];
  for (const finding of report.findings) {
    const record = finding.record;
    const seq = await deps.records.reopen(record);
    if (seq <= 0) {
      out.push({ finding, outcome: 'skipped', detail: 'taxsync holds no state of this record: delete it in the tax engine, or ingest its source event' });
      continue;
    }
    await deps.requeuer.ensureQueued(record);
    const multi = deps.redis.multi();
    appendTrace(multi, deps.keys, recordKeyString(record), { at: clock().toISOString(), step: 'replayed', detail: `reconcile ${report.run_id} (${finding.kind}) re-mapped from the latest state by ${actor}` }, deps.trace);
    await multi.exec();
    out.push({ finding, outcome: 'queued', detail: `${record.kind} ${record.source}/${record.external_id} queued from its latest state` });
  }
  return out;
}
