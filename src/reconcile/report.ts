import { z } from 'zod';
import { RecordKey } from '../domain/record-key.js';
import type { ReconcileReport as VatReconcileReport } from '../vat-ops/reconcile.js';
import { FINDING_KINDS, type Finding } from './compare.js';

/**
 * PURE: the one report of `taxsync reconcile` (table and `--json`): the tax engine part (records
 * missing, extra or differing) and, with `--period`, the VAT part (`taxsync vat reconcile`'s
 * ledger-against-draft-return report, unchanged, under `vat`).
 */

export const REPORT_VERSION = 1;

export interface Summary {
  /** Records of taxsync's compared with the engine (pending and skipped ones not included). */
  compared: number;
  matched: number;
  missing: number;
  extra: number;
  differing: number;
  /** Newest event not applied yet: compared on a later run. */
  pending: number;
  skipped: number;
  /** Entries of the engine's lists read. */
  engine_transactions: number;
  engine_customers: number;
}

export interface Report {
  v: typeof REPORT_VERSION;
  run_id: string;
  since: string | null;
  sources: string[];
  /** The connection the run was limited to (`--connection`): only its records, of its source, on both sides. */
  connection?: { id: string; external_id_prefix: string };
  started_at: string;
  finished_at: string;
  /** The run continued from a checkpoint of an interrupted one. */
  resumed: boolean;
  summary: Summary;
  findings: Finding[];
  vat?: VatReconcileReport;
  /** No finding, and (with a VAT part) the VAT part matches. */
  matches: boolean;
}

const FindingSchema = z.object({
  kind: z.enum(FINDING_KINDS),
  record: RecordKey,
  engine_id: z.string().optional(),
  reason: z.string(),
  differences: z.array(z.object({ field: z.string(), taxsync: z.string().nullable(), engine: z.string().nullable() })).optional(),
});

/** What `taxsync reconcile replay <report>` reads of a report file (the rest is for people). */
export const ReportFile = z.looseObject({ v: z.literal(REPORT_VERSION), run_id: z.string(), findings: z.array(FindingSchema) });
export type ReportFile = z.infer<typeof ReportFile>;

export function emptySummary(): Summary {
  return { compared: 0, matched: 0, missing: 0, extra: 0, differing: 0, pending: 0, skipped: 0, engine_transactions: 0, engine_customers: 0 };
}

/** Findings in a stable order: kind, then record. */
export function sortFindings(findings: Finding[]): Finding[] {
  const rank = (f: Finding) => FINDING_KINDS.indexOf(f.kind);
  const key = (f: Finding) => `${f.record.kind}|${f.record.source}|${f.record.external_id}`;
  return findings.sort((a, b) => rank(a) - rank(b) || key(a).localeCompare(key(b)));
}

/** ` (connection shop-fr: source woocommerce, prefix fr-)`, or the sources compared. */
function scopeOf(report: Report): string {
  const c = report.connection;
  if (c !== undefined) return ` (connection ${c.id}: source ${report.sources.join(', ')}${c.external_id_prefix === '' ? '' : `, prefix ${c.external_id_prefix}`})`;
  return report.sources.length > 0 ? ` (sources ${report.sources.join(', ')})` : '';
}

/** The report as text, for a terminal. */
export function renderReport(report: Report, vatText?: (vat: VatReconcileReport) => string): string {
  const s = report.summary;
  const lines = [
    `reconcile ${report.since === null ? 'all records' : `since ${report.since}`}${scopeOf(report)}${report.resumed ? ', resumed from its checkpoint' : ''}`,
    `tax engine: ${s.engine_transactions} transaction(s), ${s.engine_customers} customer(s) listed`,
    `taxsync: ${s.compared} record(s) compared: ${s.matched} match, ${s.missing} missing, ${s.differing} differing; ${s.extra} extra in the engine; ${s.pending} pending, ${s.skipped} not comparable`,
  ];
  for (const f of report.findings) {
    lines.push(`  ${f.kind.toUpperCase().padEnd(9)} ${f.record.kind} ${f.record.source}/${f.record.external_id}${f.engine_id ? `  (engine ${f.engine_id})` : ''}`);
    lines.push(`            ${f.reason}`);
    for (const d of f.differences ?? []) lines.push(`            ${d.field}: taxsync ${d.taxsync ?? '-'}, engine ${d.engine ?? '-'}`);
  }
  if (report.vat !== undefined && vatText !== undefined) lines.push('', 'VAT:', vatText(report.vat));
  lines.push(report.matches ? 'MATCH' : `DIFFERENT: replay the mismatches with \`taxsync reconcile replay <report.json>\` (from a --json report)`);
  return lines.join('\n');
}
