import type { Command } from 'commander';
import { createVarianceStore, type VarianceEntry, type VarianceStore } from '../../variance/store.js';
import { RECORD_KINDS, recordKeyString, type RecordKey } from '../../domain/record-key.js';
import { createRedis, type RedisClient } from '../../queue/connection.js';
import { createKeys, type Keys } from '../../queue/keys.js';
import { createRecordStore, type RecordStore } from '../../queue/record-state.js';
import { readTrace, type TraceEntry } from '../../queue/trace.js';
import { createVatLedger, type LedgerAttempt, type LedgerEntry, type VatLedger } from '../../queue/vat-ledger.js';
import { boot } from '../../daemon/boot.js';
import { clientRedis } from '../../daemon/find-daemon.js';
import { describeNamedRecord, recordOfArguments } from '../connection-option.js';

interface RecordView {
  record: RecordKey;
  /** The connection the record belongs to (its source, the longest prefix that fits), when there is one. */
  connection: string | null;
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
  const head = `${view.record.kind} ${view.record.source}/${view.record.external_id}${view.connection === null ? '' : ` (connection ${view.connection})`}: ${view.received} event(s) stored, version ${view.applied} applied${view.tax_id ? `, tax engine id ${view.tax_id}` : ''}${view.sent_hash ? `, body last accepted ${view.sent_hash.slice(0, 12)}` : ''}${view.waiting_since ? `, waiting since ${view.waiting_since}` : ''}`;
  const lines = view.history.map((e) => {
    const extra = [e.event_id, e.status === undefined ? undefined : `HTTP ${e.status}`, e.code, e.detail].filter(Boolean).join(' · ');
    return `  ${e.at}  ${e.step.padEnd(13)} ${extra}`;
  });
  const v = view.tax_variance;
  const variance = v ? [`  tax variance: charged ${v.charged}, computed ${v.computed} ${v.currency} (difference ${v.difference}${v.percent === null ? '' : `, ${v.percent}%`}; since ${v.at})`] : [];
  return [head, ...variance, ...(view.vat_ledger ?? []).map(renderLedger), ...lines].join('\n');
}

type Stores = { records: RecordStore; ledger: VatLedger; variances: VarianceStore; redis: RedisClient; keys: Keys };

/** What taxsync holds of the record in one kind, or undefined when it holds nothing. */
async function viewOf(stores: Stores, record: RecordKey, connection: string | null): Promise<RecordView | undefined> {
  const { records, ledger, variances, redis, keys } = stores;
  const [state, history, ledgerEntries, variance] = await Promise.all([
    records.read(record),
    readTrace(redis, keys, recordKeyString(record)),
    record.kind === 'vat' ? ledger.forRecord(recordKeyString(record)) : Promise.resolve([]),
    record.kind === 'transaction' ? variances.get(record) : Promise.resolve(undefined),
  ]);
  if (state.seq === 0 && history.length === 0 && ledgerEntries.length === 0) return undefined;
  return {
    record,
    connection,
    newest_event: state.event?.id,
    received: state.seq,
    applied: state.appliedSeq,
    tax_id: state.taxId,
    sent_hash: state.sentHash,
    waiting_since: state.waitingSince ? new Date(state.waitingSince).toISOString() : undefined,
    history,
    ...(variance ? { tax_variance: variance } : {}),
    ...(record.kind === 'vat'
      ? {
          vat_ledger: await Promise.all(
            ledgerEntries.map(async (e) => ledgerView(e, e.entity_jurisdiction && e.invoice_number ? await ledger.history(e.entity_jurisdiction, e.invoice_number) : [])),
          ),
        }
      : {}),
  };
}

export function registerTraceCommand(program: Command): void {
  program
    .command('trace')
    .argument('<connection|source>', "a connection's id (its prefix is put in front of the id: trace shop-fr 1001), or a record source as stored, e.g. shopify or api")
    .argument('<external_id>', "the record's id at the platform (refunds: refund-<id>)")
    .description("a record's history: events received, dropped as stale, coalesced, sent, answers, retries, dead letters; and the connection it belongs to")
    .option('--json', 'machine-readable output')
    .action(async (first: string, id: string, options: { json?: boolean }) => {
      const booted = boot('trace', { logToStderr: true });
      const { config, lifecycle, connections } = booted;
      const named = recordOfArguments(connections, first, id);
      const { source, external_id: externalId } = named;
      const connection = connections.ofRecord(source, externalId)?.id ?? null;
      const redis = createRedis(await clientRedis(booted), 'worker');
      try {
        const keys = createKeys(config.redis.prefix);
        const stores: Stores = {
          records: createRecordStore(redis, keys),
          ledger: createVatLedger(redis, keys, { leaseMs: config.queue.vat.leaseMs }),
          variances: createVarianceStore(redis, keys),
          redis,
          keys,
        };
        const views: RecordView[] = [];
        for (const kind of RECORD_KINDS) {
          const view = await viewOf(stores, { kind, source, external_id: externalId }, connection);
          if (view !== undefined) views.push(view);
        }
        const which = describeNamedRecord(first, named);
        if (options.json) process.stdout.write(`${JSON.stringify(views)}\n`);
        else if (views.length === 0) process.stdout.write(`no record ${which} is known\n`);
        else process.stdout.write(`${views.map(render).join('\n\n')}\n`);
        if (views.length === 0) process.exitCode = 1;
      } finally {
        redis.disconnect();
        await lifecycle.shutdown('trace finished');
      }
    });
}
