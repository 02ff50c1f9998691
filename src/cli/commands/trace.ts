import type { Command } from 'commander';
import { createVarianceStore, type VarianceEntry } from '../../variance/store.js';
import { RECORD_KINDS, recordKeyString, type RecordKey } from '../../domain/record-key.js';
import { createRedis } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { createRecordStore } from '../../queue/record-state.js';
import { readTrace, type TraceEntry } from '../../queue/trace.js';
import { createVatLedger, type LedgerAttempt, type LedgerEntry } from '../../queue/vat-ledger.js';
import { boot } from '../../daemon/boot.js';
import { clientRedis } from '../../daemon/find-daemon.js';

interface RecordView {
  record: RecordKey;
  newest_event: string | undefined;
  received: number;
  applied: number;
  tax_id: string | undefined;
  /** Hash of the body the service last accepted (skip unchanged: an equal body is not sent again). */
  sent_hash: string | undefined;
  waiting_since: string | undefined;
  history: TraceEntry[];
  /** kind `vat` only: its VAT submissions' ledger entries (one per rate after a split). */
  vat_ledger?: LedgerView[];
  /** An invoice whose charged tax differs from the engine's above the thresholds (src/variance/). */
  tax_variance?: VarianceEntry;
}

interface LedgerView {
  state: LedgerEntry['state'];
  invoice_number: string | undefined;
  entity_jurisdiction: string | undefined;
  reporting_period: string | undefined;
  net: string | undefined;
  vat: string | undefined;
  currency: string | undefined;
  attempts: number;
  ambiguous: boolean;
  warnings: boolean | undefined;
  /** Confirmed, but the service will not report it as it is (committed false, a status error). */
  attention: string | undefined;
  transaction_id: string | undefined;
  note: string | undefined;
  updated_at: string | undefined;
  /** Every attempt: time, outcome, body hash (docs/vat.md, "The ledger"). */
  history: LedgerAttempt[];
}

/** The ledger keeps the body it sent: the invoice number and entity jurisdiction come from there. */
function ledgerView(entry: LedgerEntry, history: LedgerAttempt[] = []): LedgerView {
  let body: { invoice_number?: unknown; entity_jurisdiction?: unknown } = {};
  try {
    if (entry.body !== undefined) body = JSON.parse(entry.body) as typeof body;
  } catch {
    // an unreadable body leaves both unknown
  }
  return {
    state: entry.state,
    invoice_number: entry.invoice_number ?? (typeof body.invoice_number === 'string' ? body.invoice_number : undefined),
    entity_jurisdiction: entry.entity_jurisdiction ?? (typeof body.entity_jurisdiction === 'string' ? body.entity_jurisdiction : undefined),
    reporting_period: entry.reporting_period,
    net: entry.net,
    vat: entry.vat,
    currency: entry.currency,
    attempts: entry.attempts,
    ambiguous: entry.ambiguous,
    warnings: entry.warnings,
    attention: entry.attention,
    transaction_id: entry.transaction_id,
    note: entry.note,
    updated_at: entry.updated_at,
    history,
  };
}

function renderLedger(entry: LedgerView): string {
  const parts = [
    `VAT ${entry.state}`,
    entry.invoice_number,
    entry.entity_jurisdiction ? `entity jurisdiction ${entry.entity_jurisdiction}` : undefined,
    entry.reporting_period ? `period ${entry.reporting_period}` : undefined,
    entry.net !== undefined ? `net ${entry.net} vat ${entry.vat ?? '?'} ${entry.currency ?? ''}`.trim() : undefined,
    `${entry.attempts} attempt(s)`,
    entry.warnings ? 'with warnings' : undefined,
    entry.attention ? `ATTENTION: not reported as it is: ${entry.attention}` : undefined,
    entry.transaction_id ? `transaction ${entry.transaction_id}` : undefined,
    entry.note,
  ];
  const attempts = entry.history.map((h) => `      ${h.at}  #${h.attempt} ${h.outcome}${h.body_hash ? ` · body ${h.body_hash.slice(0, 12)}` : ''}${h.note ? ` · ${h.note}` : ''}`);
  return [`  ${parts.filter(Boolean).join(' · ')}`, ...attempts].join('\n');
}

function render(view: RecordView): string {
  const head = `${view.record.kind} ${view.record.source}/${view.record.external_id}: ${view.received} event(s) stored, version ${view.applied} applied${view.tax_id ? `, tax engine id ${view.tax_id}` : ''}${view.sent_hash ? `, body last accepted ${view.sent_hash.slice(0, 12)}` : ''}${view.waiting_since ? `, waiting since ${view.waiting_since}` : ''}`;
  const lines = view.history.map((e) => {
    const extra = [e.event_id, e.status === undefined ? undefined : `HTTP ${e.status}`, e.code, e.detail].filter(Boolean).join(' · ');
    return `  ${e.at}  ${e.step.padEnd(13)} ${extra}`;
  });
  const v = view.tax_variance;
  const variance = v ? [`  tax variance: charged ${v.charged}, computed ${v.computed} ${v.currency} (difference ${v.difference}${v.percent === null ? '' : `, ${v.percent}%`}; since ${v.at})`] : [];
  return [head, ...variance, ...(view.vat_ledger ?? []).map(renderLedger), ...lines].join('\n');
}

export function registerTraceCommand(program: Command): void {
  program
    .command('trace')
    .argument('<source>', 'the record source, e.g. shopify or api')
    .argument('<external_id>', 'the record id at that source (refunds: refund-<id>)')
    .description("a record's history: events received, dropped as stale, coalesced, sent, answers, retries, dead letters")
    .option('--json', 'machine-readable output')
    .action(async (source: string, externalId: string, options: { json?: boolean }) => {
      const booted = boot('trace', { logToStderr: true });
      const { config, lifecycle } = booted;
      const redis = createRedis(await clientRedis(booted), 'worker');
      try {
        const keys = createKeys(config.redis.prefix);
        const records = createRecordStore(redis, keys);
        const ledger = createVatLedger(redis, keys, { leaseMs: config.queue.vat.leaseMs });
        const variances = createVarianceStore(redis, keys);
        const views: RecordView[] = [];
        for (const kind of RECORD_KINDS) {
          const record = { kind, source, external_id: externalId };
          const [state, history, ledgerEntries, variance] = await Promise.all([
            records.read(record),
            readTrace(redis, keys, recordKeyString(record)),
            kind === 'vat' ? ledger.forRecord(recordKeyString(record)) : Promise.resolve([]),
            kind === 'transaction' ? variances.get(record) : Promise.resolve(undefined),
          ]);
          if (state.seq === 0 && history.length === 0 && ledgerEntries.length === 0) continue;
          views.push({
            record,
            newest_event: state.event?.id,
            received: state.seq,
            applied: state.appliedSeq,
            tax_id: state.taxId,
            sent_hash: state.sentHash,
            waiting_since: state.waitingSince ? new Date(state.waitingSince).toISOString() : undefined,
            history,
            ...(variance ? { tax_variance: variance } : {}),
            ...(kind === 'vat'
              ? {
                  vat_ledger: await Promise.all(
                    ledgerEntries.map(async (e) =>
                      ledgerView(e, e.entity_jurisdiction && e.invoice_number ? await ledger.history(e.entity_jurisdiction, e.invoice_number) : []),
                    ),
                  ),
                }
              : {}),
          });
        }
        if (options.json) process.stdout.write(`${JSON.stringify(views)}\n`);
        else if (views.length === 0) process.stdout.write(`no record ${source}/${externalId} is known\n`);
        else process.stdout.write(`${views.map(render).join('\n\n')}\n`);
        if (views.length === 0) process.exitCode = 1;
      } finally {
        redis.disconnect();
        await lifecycle.shutdown('trace finished');
      }
    });
}
