import { sourceOfGuardValue } from '../domain/connection.js';
import { createHash } from 'node:crypto';
import { Cluster, type ChainableCommander, type Redis } from 'ioredis';
import { z } from 'zod';
import type { TaxClient } from '../api/tax-client.js';
import type { InvoiceData } from '../domain/events.js';
import type { Decimal } from '../domain/money.js';
import { parseRecordKeyString, recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { MappingSettings } from '../mapping/index.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { RecordStore } from '../queue/record-state.js';
import type { RefundLedger } from '../queue/refund-ledger.js';
import { readTrace } from '../queue/trace.js';
import type { ReconcileReport as VatReconcileReport } from '../vat-ops/reconcile.js';
import { atOrAfter, compareCustomer, compareTransaction, extraRecord, type Finding, type Outcome } from './compare.js';
import { EngineCustomer, EngineTransaction, customerFacts, engineField, transactionFacts } from './facts.js';
import { REPORT_VERSION, emptySummary, sortFindings, type Report } from './report.js';
import { selectionOf, type ReconcileConnection, type Selection } from './scope.js';

/**
 * `taxsync reconcile`: reads the tax engine's transaction and customer lists page by page (at the
 * contract's largest page, 100), then walks taxsync's latest-state store and compares each record
 * (compare.ts), then looks for engine records taxsync holds nothing of. Every step leaves a
 * checkpoint in Redis (the engine's lists read so far, the list cursor or the SCAN cursor, the
 * outcomes), so an interrupted run started again with the same options continues where it
 * stopped; a finished run removes its keys.
 */

export const RECONCILE_PHASES = ['transactions', 'customers', 'records', 'extras', 'done'] as const;
export type ReconcilePhase = (typeof RECONCILE_PHASES)[number];

/** The contract's largest page (tax-calculation-api.md, "Limits"). */
export const RECONCILE_PAGE_SIZE = 100;

export interface ReconcileDeps {
  redis: RedisClient;
  keys: Keys;
  records: RecordStore;
  refunds: Pick<RefundLedger, 'claimedByOthers'>;
  tax: Pick<TaxClient, 'transactions' | 'customers'>;
  settings: MappingSettings;
  clock?: () => Date;
  /** Told after every page or batch: the phase and how many of its items are done. */
  onProgress?: (phase: ReconcilePhase, done: number) => void;
  /** The VAT part (`taxsync vat reconcile`'s report), when asked for. */
  vat?: () => Promise<VatReconcileReport>;
}

export interface ReconcileOptions {
  /** Records whose latest event (engine records: whose last write) is older are not compared. */
  since?: Date;
  /** Only these sources (default: every source taxsync holds records of or has a connector for). */
  sources?: readonly string[];
  /** Only this connection's records, on both sides (scope.ts); its source stands for `sources`. */
  connection?: ReconcileConnection;
  /** Start over even when a checkpoint of the same run exists. */
  fresh?: boolean;
  /** Checkpoint lifetime: an interrupted run older than this starts over. */
  checkpointTtlMs?: number;
  pageSize?: number;
}

export const DEFAULT_CHECKPOINT_TTL_MS = 24 * 3600 * 1000;

/** The same options name the same run (and find its checkpoint). */
export function reconcileRunId(options: Pick<ReconcileOptions, 'since' | 'sources' | 'connection'>): string {
  const scope = { since: options.since?.toISOString() ?? null, sources: [...(options.sources ?? [])].sort() };
  // Without a connection the id is the one runs had before connections: their checkpoints still resume.
  // With one, its source and prefix too: after an accepted change they select other records.
  const { connection } = options;
  const id = JSON.stringify(connection === undefined ? scope : { ...scope, connection: connection.id, source: connection.source, prefix: connection.externalIdPrefix });
  return createHash('sha256').update(id).digest('hex').slice(0, 16);
}

const Checkpoint = z.object({
  phase: z.enum(RECONCILE_PHASES),
  cursor: z.string().default(''),
  started_at: z.string(),
});

const StoredOutcome = z.object({
  outcome: z.enum(['matched', 'pending', 'skipped', 'finding']),
  finding: z.unknown().optional(),
});

const SCAN_COUNT = 200;

/** Glob-escapes a key prefix for SCAN MATCH. */
const globEscape = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

function scanNodes(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

type Checkpoint = z.infer<typeof Checkpoint>;

/** One run: its keys in Redis (all expire with the checkpoint; a finished run removes them), what it compares, where it is. */
interface Run {
  deps: ReconcileDeps;
  options: ReconcileOptions;
  id: string;
  k: { checkpoint: string; transactions: string; customers: string; outcomes: string; sources: string; inline: string };
  all: string[];
  clock: () => Date;
  selection: Selection;
  cp: Checkpoint;
  /** It continued from a checkpoint of an interrupted one. */
  resumed: boolean;
  /** Keeps `next` as the checkpoint, with whatever `multi` holds, in one transaction. */
  save(next: Checkpoint, multi?: ChainableCommander): Promise<void>;
  advance(phase: ReconcilePhase): Promise<void>;
}

export async function runReconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<Report> {
  const run = await startRun(deps, options);
  if (run.cp.phase === 'transactions' || run.cp.phase === 'customers') await readEngineLists(run);
  if (run.cp.phase === 'records') await compareRecords(run);
  if (run.cp.phase === 'extras') await findExtras(run);
  const report = await reportOf(run);
  // /metrics and `status` report the installation's last whole run: one shop's or one source's
  // check must not clear the findings of the whole (an alert on them would clear wrongly).
  if (options.connection === undefined && (options.sources ?? []).length === 0) await recordSummary(deps.redis, deps.keys, report);
  await deps.redis.del(...run.all);
  return report;
}

/** The run the options name: the checkpoint of an interrupted one, or a new one. */
async function startRun(deps: ReconcileDeps, options: ReconcileOptions): Promise<Run> {
  const { redis, keys } = deps;
  const clock = deps.clock ?? (() => new Date());
  const id = reconcileRunId(options);
  const key = (part: string) => keys.reconcile(id, part);
  const k = { checkpoint: key('checkpoint'), transactions: key('transactions'), customers: key('customers'), outcomes: key('outcomes'), sources: key('sources'), inline: key('inline-customers') };
  const all = Object.values(k);
  const ttl = options.checkpointTtlMs ?? DEFAULT_CHECKPOINT_TTL_MS;
  const run: Run = {
    deps,
    options,
    id,
    k,
    all,
    clock,
    selection: selectionOf(options),
    cp: { phase: 'transactions', cursor: '', started_at: clock().toISOString() },
    resumed: false,
    async save(next, multi = redis.multi()) {
      run.cp = next;
      multi.hset(k.checkpoint, next);
      for (const part of all) multi.pexpire(part, ttl);
      await multi.exec();
    },
    advance: (phase) => run.save({ ...run.cp, phase, cursor: '' }),
  };
  const stored = Checkpoint.safeParse(await redis.hgetall(k.checkpoint));
  if (options.fresh === true || !stored.success || stored.data.phase === 'done') {
    await redis.del(...all);
    await run.save(run.cp);
  } else {
    run.cp = stored.data;
    run.resumed = true;
  }
  return run;
}

/** 1, 2: the engine's lists, one page at a time, each page and its cursor in one transaction; only the selection's entries are kept. */
async function readEngineLists(run: Run): Promise<void> {
  const { redis, tax } = run.deps;
  const pageSize = run.options.pageSize ?? RECONCILE_PAGE_SIZE;
  for (const [phase, resource, index, facts] of [
    ['transactions', tax.transactions, run.k.transactions, transactionFacts],
    ['customers', tax.customers, run.k.customers, customerFacts],
  ] as const) {
    if (run.cp.phase !== phase) continue;
    let done = await redis.hlen(index);
    for await (const page of (resource as Pick<TaxClient['transactions'], 'pages'>).pages({ limit: pageSize, ...(run.cp.cursor === '' ? {} : { after: run.cp.cursor }) })) {
      const multi = redis.multi();
      for (const answer of page.data) {
        const f = (facts as (a: unknown) => { source: string; external_id: string } | undefined)(answer);
        if (f !== undefined && run.selection.has(f.source, f.external_id)) multi.hset(index, engineField(f.source, f.external_id), JSON.stringify(f));
      }
      const next = page.cursors?.has_next ? (page.cursors.after ?? '') : '';
      await run.save({ ...run.cp, cursor: next }, multi);
      done += page.data.length;
      run.deps.onProgress?.(phase, done);
    }
    await run.advance(phase === 'transactions' ? 'customers' : 'records');
  }
}

async function engineEntry<T>(run: Run, index: string, schema: z.ZodType<T>, source: string, externalId: string): Promise<T | undefined> {
  const raw = await run.deps.redis.hget(index, engineField(source, externalId));
  const parsed = raw === null ? undefined : schema.safeParse(JSON.parse(raw));
  return parsed?.success ? parsed.data : undefined;
}
const engineTransaction = (run: Run, source: string, externalId: string) => engineEntry(run, run.k.transactions, EngineTransaction, source, externalId);
const engineCustomer = (run: Run, source: string, externalId: string) => engineEntry(run, run.k.customers, EngineCustomer, source, externalId);

/** One of taxsync's records against the engine's; undefined when the run does not compare it. */
async function compareHeld(run: Run, record: RecordKey): Promise<Outcome | undefined> {
  if (record.kind !== 'transaction' && record.kind !== 'customer') return undefined;
  if (!run.selection.has(record.source, record.external_id)) return undefined;
  const { deps } = run;
  const state = await deps.records.read(record);
  const event = state.event;
  if (event === undefined) return undefined;
  if (!atOrAfter(event.occurred_at, run.options.since)) return undefined;
  const held = { key: record, event, pending: state.seq > state.appliedSeq };
  if (record.kind === 'customer') return compareCustomer(held, { settings: deps.settings, engine: await engineCustomer(run, record.source, record.external_id) });
  // A refund's invoice carries the same connection's prefix: it is in the run's selection too.
  const invoiceId = event.type === 'refund.created' || event.type === 'refund.cancelled' ? event.data.invoice_external_id : undefined;
  let original: { engine: EngineTransaction | undefined; invoice: InvoiceData | undefined } | undefined;
  let alreadyRefunded: Decimal | undefined;
  if (invoiceId !== undefined) {
    const invoiceKey: RecordKey = { kind: 'transaction', source: record.source, external_id: invoiceId };
    const invoiceEvent = (await deps.records.read(invoiceKey)).appliedEvent;
    original = { engine: await engineTransaction(run, record.source, invoiceId), invoice: invoiceEvent?.type === 'invoice.upserted' ? invoiceEvent.data : undefined };
    alreadyRefunded = await deps.refunds.claimedByOthers(invoiceKey, record.external_id);
  }
  if (event.type === 'invoice.upserted' && event.data.customer !== undefined) {
    await deps.redis.sadd(run.k.inline, engineField(record.source, event.data.customer.external_id));
  }
  return compareTransaction(held, {
    settings: deps.settings,
    engine: await engineTransaction(run, record.source, record.external_id),
    ...(original ? { original } : {}),
    ...(alreadyRefunded ? { alreadyRefunded } : {}),
  });
}

/** A missing record that was dead-lettered says so (its trace's last step). */
async function annotate(run: Run, finding: Finding): Promise<Finding> {
  if (finding.kind !== 'missing') return finding;
  const trace = await readTrace(run.deps.redis, run.deps.keys, recordKeyString(finding.record));
  const last = trace[trace.length - 1];
  if (last?.step !== 'dead-lettered') return finding;
  return { ...finding, reason: `${finding.reason}; it was dead-lettered${last.code ? ` (${last.code})` : ''}: see \`taxsync dlq list\`` };
}

/** 3: taxsync's records. SCAN may return a key twice: outcomes are a hash, so it counts once. */
async function compareRecords(run: Run): Promise<void> {
  const { redis, keys } = run.deps;
  const statePrefix = keys.state('');
  const nodes = scanNodes(redis);
  let [nodeIndex, cursor] = run.cp.cursor === '' ? [0, '0'] : (run.cp.cursor.split(':') as [string, string]).map((v, i) => (i === 0 ? Number(v) : v)) as [number, string];
  let done = await redis.hlen(run.k.outcomes);
  for (; nodeIndex < nodes.length; nodeIndex += 1, cursor = '0') {
    do {
      const [next, found] = await nodes[nodeIndex]!.scan(cursor, 'MATCH', `${globEscape(statePrefix)}*`, 'COUNT', SCAN_COUNT);
      const multi = redis.multi();
      for (const stateKey of found) {
        let record: RecordKey;
        try {
          record = parseRecordKeyString(stateKey.slice(statePrefix.length));
        } catch {
          continue;
        }
        const outcome = await compareHeld(run, record);
        if (outcome === undefined) continue;
        multi.sadd(run.k.sources, record.source);
        const value = outcome.outcome === 'finding' ? { outcome: 'finding', finding: await annotate(run, outcome.finding) } : { outcome: outcome.outcome };
        multi.hset(run.k.outcomes, recordKeyString(record), JSON.stringify(value));
        done += 1;
      }
      cursor = next;
      await run.save({ ...run.cp, cursor: next === '0' ? `${nodeIndex + 1}:0` : `${nodeIndex}:${next}` }, multi);
      run.deps.onProgress?.('records', done);
    } while (cursor !== '0');
  }
  await run.advance('extras');
}

/** The sources taxsync writes: those of the records it compared, and those the source-change guard remembers for its connections. */
async function writtenSources(run: Run): Promise<Set<string>> {
  const { redis, keys } = run.deps;
  const remembered = Object.values(await redis.hgetall(keys.sources)).map(sourceOfGuardValue);
  return new Set([...(await redis.smembers(run.k.sources)), ...remembered]);
}

/** 4: engine records of the selection that taxsync holds no state of. */
async function findExtras(run: Run): Promise<void> {
  const { redis, keys } = run.deps;
  const sources = run.selection.sources ?? (await writtenSources(run));
  const inline = new Set(await redis.smembers(run.k.inline));
  let done = 0;
  for (const [kind, index, schema] of [
    ['transaction', run.k.transactions, EngineTransaction],
    ['customer', run.k.customers, EngineCustomer],
  ] as const) {
    let cursor = '0';
    do {
      const [next, flat] = await redis.hscan(index, cursor, 'COUNT', SCAN_COUNT);
      cursor = next;
      const multi = redis.multi();
      for (let i = 0; i < flat.length; i += 2) {
        const parsed = schema.safeParse(JSON.parse(flat[i + 1]!));
        if (!parsed.success) continue;
        const f = parsed.data;
        done += 1;
        if (!sources.has(f.source) || !run.selection.has(f.source, f.external_id) || !atOrAfter(f.updated_at, run.options.since)) continue;
        if (kind === 'customer' && inline.has(flat[i]!)) continue;
        const record: RecordKey = { kind, source: f.source, external_id: f.external_id };
        if ((await redis.exists(keys.state(recordKeyString(record)))) === 1) continue;
        multi.hset(run.k.outcomes, `extra:${recordKeyString(record)}`, JSON.stringify({ outcome: 'finding', finding: extraRecord(kind, f) }));
      }
      await multi.exec();
      run.deps.onProgress?.('extras', done);
    } while (cursor !== '0');
  }
  await run.advance('done');
}

/** The report from what the run stored (also what earlier, interrupted attempts stored). */
async function reportOf(run: Run): Promise<Report> {
  const { redis } = run.deps;
  const summary = emptySummary();
  summary.engine_transactions = await redis.hlen(run.k.transactions);
  summary.engine_customers = await redis.hlen(run.k.customers);
  const findings: Finding[] = [];
  for (const raw of await redis.hvals(run.k.outcomes)) {
    const parsed = StoredOutcome.safeParse(JSON.parse(raw));
    if (!parsed.success) continue;
    const o = parsed.data;
    if (o.outcome === 'finding') {
      const finding = o.finding as Finding;
      findings.push(finding);
      summary[finding.kind] += 1;
      if (finding.kind !== 'extra') summary.compared += 1;
    } else if (o.outcome === 'matched') {
      summary.matched += 1;
      summary.compared += 1;
    } else summary[o.outcome] += 1;
  }
  const vat = run.deps.vat ? await run.deps.vat() : undefined;
  const connection = run.options.connection;
  return {
    v: REPORT_VERSION,
    run_id: run.id,
    since: run.options.since?.toISOString() ?? null,
    sources: run.selection.sources ? [...run.selection.sources].sort() : (await redis.smembers(run.k.sources)).sort(),
    ...(connection === undefined ? {} : { connection: { id: connection.id, external_id_prefix: connection.externalIdPrefix } }),
    started_at: run.cp.started_at,
    finished_at: run.clock().toISOString(),
    resumed: run.resumed,
    summary,
    findings: sortFindings(findings),
    ...(vat ? { vat } : {}),
    matches: findings.length === 0 && (vat === undefined || vat.matches !== false),
  };
}

/** The last run's counts, for `/metrics` (taxsync_reconcile_findings) and `status`. */
export async function recordSummary(redis: RedisClient, keys: Keys, report: Report): Promise<void> {
  await redis.hset(keys.counters, {
    'reconcile:missing': report.summary.missing,
    'reconcile:extra': report.summary.extra,
    'reconcile:differing': report.summary.differing,
    'reconcile:matched': report.summary.matched,
    'reconcile:finished_at_ms': Date.parse(report.finished_at),
  });
}
