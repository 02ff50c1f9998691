import { createHash } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
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
  /** Start over even when a checkpoint of the same run exists. */
  fresh?: boolean;
  /** Checkpoint lifetime: an interrupted run older than this starts over. */
  checkpointTtlMs?: number;
  pageSize?: number;
}

export const DEFAULT_CHECKPOINT_TTL_MS = 24 * 3600 * 1000;

/** The same options name the same run (and find its checkpoint). */
export function reconcileRunId(options: Pick<ReconcileOptions, 'since' | 'sources'>): string {
  const id = JSON.stringify({ since: options.since?.toISOString() ?? null, sources: [...(options.sources ?? [])].sort() });
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

export async function runReconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<Report> {
  const { redis, keys } = deps;
  const clock = deps.clock ?? (() => new Date());
  const runId = reconcileRunId(options);
  const key = (part: string) => keys.reconcile(runId, part);
  const cpKey = key('checkpoint');
  const txKey = key('transactions');
  const cuKey = key('customers');
  const outKey = key('outcomes');
  const sourcesKey = key('sources');
  const inlineKey = key('inline-customers');
  const all = [cpKey, txKey, cuKey, outKey, sourcesKey, inlineKey];
  const ttl = options.checkpointTtlMs ?? DEFAULT_CHECKPOINT_TTL_MS;
  const pageSize = options.pageSize ?? RECONCILE_PAGE_SIZE;
  const wanted = options.sources === undefined || options.sources.length === 0 ? undefined : new Set(options.sources);

  const stored = Checkpoint.safeParse(await redis.hgetall(cpKey));
  let cp: z.infer<typeof Checkpoint>;
  let resumed = false;
  if (options.fresh === true || !stored.success || stored.data.phase === 'done') {
    await redis.del(...all);
    cp = { phase: 'transactions', cursor: '', started_at: clock().toISOString() };
    await save(cp);
  } else {
    cp = stored.data;
    resumed = true;
  }

  async function save(next: z.infer<typeof Checkpoint>, multi = redis.multi()): Promise<void> {
    multi.hset(cpKey, next);
    for (const k of all) multi.pexpire(k, ttl);
    await multi.exec();
  }
  const advance = async (phase: ReconcilePhase) => {
    cp = { ...cp, phase, cursor: '' };
    await save(cp);
  };

  // 1, 2: the engine's lists, one page at a time, each page and its cursor in one transaction.
  for (const [phase, resource, index, facts] of [
    ['transactions', deps.tax.transactions, txKey, transactionFacts],
    ['customers', deps.tax.customers, cuKey, customerFacts],
  ] as const) {
    if (cp.phase !== phase) continue;
    let done = await redis.hlen(index);
    for await (const page of (resource as Pick<TaxClient['transactions'], 'pages'>).pages({ limit: pageSize, ...(cp.cursor === '' ? {} : { after: cp.cursor }) })) {
      const multi = redis.multi();
      for (const answer of page.data) {
        const f = (facts as (a: unknown) => { source: string; external_id: string } | undefined)(answer);
        if (f !== undefined) multi.hset(index, engineField(f.source, f.external_id), JSON.stringify(f));
      }
      const next = page.cursors?.has_next ? (page.cursors.after ?? '') : '';
      cp = { ...cp, cursor: next };
      await save(cp, multi);
      done += page.data.length;
      deps.onProgress?.(phase, done);
    }
    await advance(phase === 'transactions' ? 'customers' : 'records');
  }

  const engineTransaction = async (source: string, externalId: string) => {
    const raw = await redis.hget(txKey, engineField(source, externalId));
    const parsed = raw === null ? undefined : EngineTransaction.safeParse(JSON.parse(raw));
    return parsed?.success ? parsed.data : undefined;
  };
  const engineCustomer = async (source: string, externalId: string) => {
    const raw = await redis.hget(cuKey, engineField(source, externalId));
    const parsed = raw === null ? undefined : EngineCustomer.safeParse(JSON.parse(raw));
    return parsed?.success ? parsed.data : undefined;
  };

  async function compareHeld(record: RecordKey): Promise<Outcome | undefined> {
    if (record.kind !== 'transaction' && record.kind !== 'customer') return undefined;
    if (wanted !== undefined && !wanted.has(record.source)) return undefined;
    const state = await deps.records.read(record);
    const event = state.event;
    if (event === undefined) return undefined;
    if (!atOrAfter(event.occurred_at, options.since)) return undefined;
    const held = { key: record, event, pending: state.seq > state.appliedSeq };
    if (record.kind === 'customer') return compareCustomer(held, { settings: deps.settings, engine: await engineCustomer(record.source, record.external_id) });
    const invoiceId = event.type === 'refund.created' || event.type === 'refund.cancelled' ? event.data.invoice_external_id : undefined;
    let original: { engine: EngineTransaction | undefined; invoice: InvoiceData | undefined } | undefined;
    let alreadyRefunded: Decimal | undefined;
    if (invoiceId !== undefined) {
      const invoiceKey: RecordKey = { kind: 'transaction', source: record.source, external_id: invoiceId };
      const invoiceState = await deps.records.read(invoiceKey);
      const invoiceEvent = invoiceState.appliedEvent;
      original = { engine: await engineTransaction(record.source, invoiceId), invoice: invoiceEvent?.type === 'invoice.upserted' ? invoiceEvent.data : undefined };
      alreadyRefunded = await deps.refunds.claimedByOthers(invoiceKey, record.external_id);
    }
    if (event.type === 'invoice.upserted' && event.data.customer !== undefined) {
      await redis.sadd(inlineKey, engineField(record.source, event.data.customer.external_id));
    }
    return compareTransaction(held, {
      settings: deps.settings,
      engine: await engineTransaction(record.source, record.external_id),
      ...(original ? { original } : {}),
      ...(alreadyRefunded ? { alreadyRefunded } : {}),
    });
  }

  /** A missing record that was dead-lettered says so (its trace's last step). */
  async function annotate(finding: Finding): Promise<Finding> {
    if (finding.kind !== 'missing') return finding;
    const trace = await readTrace(redis, keys, recordKeyString(finding.record));
    const last = trace[trace.length - 1];
    if (last?.step !== 'dead-lettered') return finding;
    return { ...finding, reason: `${finding.reason}; it was dead-lettered${last.code ? ` (${last.code})` : ''}: see \`taxsync dlq list\`` };
  }

  // 3: taxsync's records. SCAN may return a key twice: outcomes are a hash, so it counts once.
  if (cp.phase === 'records') {
    const statePrefix = keys.state('');
    const nodes = scanNodes(redis);
    let [nodeIndex, cursor] = cp.cursor === '' ? [0, '0'] : (cp.cursor.split(':') as [string, string]).map((v, i) => (i === 0 ? Number(v) : v)) as [number, string];
    let done = await redis.hlen(outKey);
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
          const outcome = await compareHeld(record);
          if (outcome === undefined) continue;
          multi.sadd(sourcesKey, record.source);
          const value = outcome.outcome === 'finding' ? { outcome: 'finding', finding: await annotate(outcome.finding) } : { outcome: outcome.outcome };
          multi.hset(outKey, recordKeyString(record), JSON.stringify(value));
          done += 1;
        }
        cursor = next;
        cp = { ...cp, cursor: next === '0' ? `${nodeIndex + 1}:0` : `${nodeIndex}:${next}` };
        await save(cp, multi);
        deps.onProgress?.('records', done);
      } while (cursor !== '0');
    }
    await advance('extras');
  }

  // 4: engine records in taxsync's sources that taxsync holds no state of.
  if (cp.phase === 'extras') {
    const sources = wanted ?? new Set([...(await redis.smembers(sourcesKey)), ...Object.values(await redis.hgetall(keys.sources))]);
    const inline = new Set(await redis.smembers(inlineKey));
    let done = 0;
    for (const [kind, index, schema] of [
      ['transaction', txKey, EngineTransaction],
      ['customer', cuKey, EngineCustomer],
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
          if (!sources.has(f.source) || !atOrAfter(f.updated_at, options.since)) continue;
          if (kind === 'customer' && inline.has(flat[i]!)) continue;
          const record: RecordKey = { kind, source: f.source, external_id: f.external_id };
          if ((await redis.exists(keys.state(recordKeyString(record)))) === 1) continue;
          multi.hset(outKey, `extra:${recordKeyString(record)}`, JSON.stringify({ outcome: 'finding', finding: extraRecord(kind, f) }));
        }
        await multi.exec();
        deps.onProgress?.('extras', done);
      } while (cursor !== '0');
    }
    await advance('done');
  }

  // The report from what the run stored (also what earlier, interrupted attempts stored).
  const summary = emptySummary();
  summary.engine_transactions = await redis.hlen(txKey);
  summary.engine_customers = await redis.hlen(cuKey);
  const findings: Finding[] = [];
  for (const raw of await redis.hvals(outKey)) {
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
  const vat = deps.vat ? await deps.vat() : undefined;
  const report: Report = {
    v: REPORT_VERSION,
    run_id: runId,
    since: options.since?.toISOString() ?? null,
    sources: wanted ? [...wanted].sort() : (await redis.smembers(sourcesKey)).sort(),
    started_at: cp.started_at,
    finished_at: clock().toISOString(),
    resumed,
    summary,
    findings: sortFindings(findings),
    ...(vat ? { vat } : {}),
    matches: findings.length === 0 && (vat === undefined || vat.matches !== false),
  };
  await recordSummary(redis, keys, report);
  await redis.del(...all);
  return report;
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
