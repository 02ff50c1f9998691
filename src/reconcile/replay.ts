import { resendRecord, type ResendDeps } from '../queue/resend.js';
import type { Finding } from './compare.js';

export interface ReplayedFinding {
  finding: Finding;
  outcome: 'queued' | 'skipped';
  detail: string;
}

/**
 * `taxsync reconcile replay <report>`: each mismatch of a report is sent again from taxsync's
 * latest state (re-mapped by its own job, like `dlq replay --remap`) through the one resend path:
 * the record's newest version marked not applied, its job, a trace line and an audit line in ONE
 * transaction (src/queue/resend.ts). An engine record taxsync holds nothing of cannot be
 * re-mapped: it is listed, and left to the operator.
 */
export async function replayFindings(deps: ResendDeps, report: { run_id: string; findings: readonly Finding[] }): Promise<ReplayedFinding[]> {
  const out: ReplayedFinding[] = [];
  for (const finding of report.findings) {
    const record = finding.record;
    const outcome = await resendRecord(deps, record, {
      trace: `reconcile ${report.run_id} (${finding.kind}) re-mapped from the latest state by ${deps.audit.actor}`,
      note: `reconcile ${report.run_id}: ${finding.kind}`,
    });
    if (outcome === 'unknown') {
      out.push({ finding, outcome: 'skipped', detail: 'taxsync holds no state of this record: delete it in the tax engine, or ingest its source event' });
      continue;
    }
    out.push({ finding, outcome: 'queued', detail: `${record.kind} ${record.source}/${record.external_id} queued from its latest state` });
  }
  return out;
}
