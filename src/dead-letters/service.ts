import type { Queue } from 'bullmq';
import type { RedisClient } from '../queue/connection.js';
import type { Settings } from '../config/settings.js';
import type { Connections } from '../config/connections.js';
import { parseFor } from '../connectors/namespace.js';
import { mapErpBody } from '../connectors/erp/map.js';
import { getConnector } from '../connectors/registry.js';
import type { ParseResult, WebhookRequest } from '../connectors/types.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { AuditLog } from '../queue/audit.js';
import type { DeadLetterEntry, DeadLetterStore } from '../queue/dead-letter.js';
import type { Keys } from '../queue/keys.js';
import { QUEUE_NAMES, RECORD_QUEUES, queueForKind, type QueueName } from '../queue/names.js';
import type { Producer } from '../queue/producer.js';
import type { RecordStore } from '../queue/record-state.js';
import { dropSupersededEntry, replayRecord, type ReplayDeps } from '../queue/replay.js';
import type { RetryPolicies, RetryPolicy } from '../queue/retry.js';
import type { TraceSettings } from '../queue/trace.js';
import { vatLedgerStatus, type VatLedger, type VatLedgerStatus } from '../queue/vat-ledger.js';
import { sourceOf } from '../connectors/registry.js';
import { describeFilter, describeTally, matchesFilter, newestFirst, tally, type DlqFilter, type DlqTally } from './filter.js';

/** Everything the dead-letter tools need, over ONE connection shared by the queues (MULTI spans them). */
export interface DlqDeps {
  queues: Readonly<Record<QueueName, Queue>>;
  keys: Keys;
  deadLetters: DeadLetterStore;
  producer: Producer;
  records: RecordStore;
  ledger: VatLedger;
  audit: AuditLog;
  settings: Settings;
  /** The connections a kept delivery is read again for (docs/connections.md). @defaultValue each platform's default */
  connections?: Connections;
  trace: TraceSettings;
  retry?: RetryPolicy | RetryPolicies;
  clock?: () => Date;
}

/** Every entry matching `filter`, newest first. */
export async function selectEntries(deps: Pick<DlqDeps, 'deadLetters'>, filter: DlqFilter): Promise<DeadLetterEntry[]> {
  const out: DeadLetterEntry[] = [];
  for await (const entry of deps.deadLetters.all()) if (matchesFilter(entry, filter)) out.push(entry);
  return out.sort(newestFirst);
}

/** The entries named by id, in the order given; ids that are not (or no longer) in the queue are returned apart. */
export async function entriesById(deps: Pick<DlqDeps, 'deadLetters'>, ids: readonly string[]): Promise<{ entries: DeadLetterEntry[]; missing: string[] }> {
  const entries: DeadLetterEntry[] = [];
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const entry = await deps.deadLetters.get(id);
    if (entry) entries.push(entry);
    else missing.push(id);
  }
  return { entries, missing };
}

export interface ListPage {
  total: number;
  offset: number;
  entries: DeadLetterEntry[];
}

export async function listEntries(deps: Pick<DlqDeps, 'deadLetters'>, filter: DlqFilter, page: { offset: number; limit: number }): Promise<ListPage> {
  const all = await selectEntries(deps, filter);
  return { total: all.length, offset: page.offset, entries: all.slice(page.offset, page.offset + page.limit) };
}

export async function dlqStats(deps: Pick<DlqDeps, 'deadLetters'>): Promise<DlqTally> {
  const all: DeadLetterEntry[] = [];
  for await (const entry of deps.deadLetters.all()) all.push(entry);
  return tally(all);
}

/** Who chose the entries: the ids named, or the filter. */
export interface Selection {
  ids?: readonly string[];
  filter?: DlqFilter;
}

function selectionForAudit(selection: Selection): { ids?: string[]; filter?: Record<string, string> } {
  return {
    ...(selection.ids && selection.ids.length > 0 ? { ids: [...selection.ids] } : {}),
    ...(selection.filter ? { filter: describeFilter(selection.filter) } : {}),
  };
}

/** Writes the entries as JSON lines; audited (an export can carry customer data). */
export async function exportEntries(deps: Pick<DlqDeps, 'audit'>, entries: readonly DeadLetterEntry[], selection: Selection, write: (line: string) => void): Promise<number> {
  for (const entry of entries) write(`${JSON.stringify(entry)}\n`);
  await deps.audit.append({ action: 'export', ...selectionForAudit(selection), count: entries.length, outcome: `${entries.length} exported` });
  return entries.length;
}

/** Removes the entries and writes the audit line in ONE transaction. */
export async function discardEntries(deps: Pick<DlqDeps, 'queues' | 'deadLetters' | 'audit'>, entries: readonly DeadLetterEntry[], selection: Selection): Promise<number> {
  const client = (await deps.queues[QUEUE_NAMES.deadLetter].backend.client) as unknown as RedisClient;
  const multi = client.multi();
  for (const entry of entries) deps.deadLetters.removeTo(multi, entry.id);
  deps.audit.appendTo(multi, {
    action: 'discard',
    ...selectionForAudit(selection),
    count: entries.length,
    outcome: `${entries.length} discarded (${describeTally(tally(entries))})`,
  });
  const results = await multi.exec();
  if (results === null) throw new Error('Redis transaction was aborted');
  for (const [error] of results) if (error) throw error;
  return entries.length;
}

// ---------------------------------------------------------------------------------------------
// Replay

export type ReplayOutcome =
  /** The dead-lettered version (or its `dlq edit`ed form) is queued again; the entry is gone. */
  | 'replayed'
  /** `--remap`: the record's latest known state is queued (whatever version it is); the entry is gone. */
  | 'remapped'
  /** A newer event of the record was received meanwhile: it is (or will be) sent by its own job; the entry is gone. */
  | 'superseded'
  /** An unreadable delivery now parses: its events are queued; the entry is gone. */
  | 'accepted'
  /** An unreadable delivery now parses to nothing taxsync sends: the entry is gone. */
  | 'ignored'
  /** Still unreadable: the entry stays. */
  | 'still-invalid'
  /** Cannot be replayed as it is: the entry stays. */
  | 'skipped'
  /** Gone before its turn (replayed or discarded by someone else). */
  | 'gone';

export interface ReplayResult {
  id: string;
  outcome: ReplayOutcome;
  detail: string;
}

export interface ReplaySummary {
  results: ReplayResult[];
  counts: Record<ReplayOutcome, number>;
}

const REMOVED: readonly ReplayOutcome[] = ['replayed', 'remapped', 'superseded', 'accepted', 'ignored'];

export function replayLeavesQueue(outcome: ReplayOutcome): boolean {
  return REMOVED.includes(outcome);
}

function eventIdOf(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const id = (event as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

function heldEventId(eventJson: string | undefined): string | undefined {
  if (eventJson === undefined) return undefined;
  try {
    return eventIdOf(JSON.parse(eventJson));
  } catch {
    return undefined;
  }
}

/** Connector headers a delivery's parse reads, rebuilt from what the entry kept (signatures are not needed: it was verified when received). */
export function replayHeaders(raw: NonNullable<DeadLetterEntry['raw']>, platform = raw.connector): Record<string, string | undefined> {
  return getConnector(platform)?.replayHeaders?.({ topic: raw.topic, deliveryId: raw.delivery_id }) ?? {};
}

/**
 * Reads a kept delivery again with today's connector code, without signature verification, as
 * the connection it came to (`raw.connector`) writes it. An entry kept before connections existed
 * names its platform, which is its default connection. An entry of a connection no longer
 * configured stays unreadable until the connection is declared again: read as another connection
 * it would be written under the wrong prefix.
 */
export function parseKeptDelivery(raw: NonNullable<DeadLetterEntry['raw']>, settings: Settings, connections?: Connections): ParseResult {
  if (raw.connector === 'ingest') {
    // A `taxsync ingest` line: the ERP connector's rules, one event per line (as ingest reads it).
    let value: unknown;
    try {
      value = JSON.parse(raw.body);
    } catch (error) {
      return { kind: 'invalid', message: `not valid JSON: ${(error as Error).message}` };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'invalid', message: 'a line must hold one event (a JSON object)' };
    const mapped = mapErpBody(value as never, { source: sourceOf('erp', settings) });
    if (mapped.kind === 'invalid') return { kind: 'invalid', topic: mapped.topic, message: mapped.message, ...(mapped.fields ? { fields: mapped.fields } : {}) };
    return { kind: 'events', topic: mapped.topic, deliveryId: raw.topic ?? 'ingest', events: mapped.events, ...(mapped.rejected.length > 0 ? { rejected: mapped.rejected } : {}) };
  }
  const connection = connections?.get(raw.connector);
  const connector = getConnector(connection?.platform ?? raw.connector);
  if (!connector) return { kind: 'invalid', message: `no connection "${raw.connector}" is configured: declare it again (docs/connections.md) to read its deliveries` };
  const req: WebhookRequest = {
    headers: replayHeaders(raw, connector.id),
    rawBody: Buffer.from(raw.body, 'utf8'),
    contentType: raw.content_type,
    receivedAt: new Date(raw.received_at),
  };
  try {
    const keys = connection ?? { id: connector.id, source: sourceOf(connector.id, settings), externalIdPrefix: '' };
    return parseFor(connector, keys, req, { source: keys.source, secrets: [], toleranceSeconds: 300, connection: keys.id });
  } catch (error) {
    return { kind: 'invalid', message: `connector failed to read the payload: ${(error as Error).message}` };
  }
}

/**
 * A rejected VAT submission goes back to pending so the resend passes through the ledger; a
 * confirmed one stays confirmed and is never resent (invariant 5). Safe to repeat.
 */
async function reopenRejected(deps: DlqDeps, recordKey: string): Promise<void> {
  for (const ledgerEntry of await deps.ledger.forRecord(recordKey)) {
    if (ledgerEntry.state !== 'rejected' || ledgerEntry.body === undefined) continue;
    const body = JSON.parse(ledgerEntry.body) as { entity_jurisdiction?: unknown; invoice_number?: unknown };
    if (typeof body.entity_jurisdiction === 'string' && typeof body.invoice_number === 'string') {
      await deps.ledger.reopen(body.entity_jurisdiction, body.invoice_number);
    }
  }
}

async function replayWorkerEntry(deps: DlqDeps, entry: DeadLetterEntry, record: RecordKey, actor: string, remap: boolean): Promise<ReplayResult> {
  const clock = deps.clock ?? (() => new Date());
  const id = entry.id;
  const queueName = entry.queue as QueueName;
  if (!(RECORD_QUEUES as readonly string[]).includes(queueName) || queueForKind(record.kind) !== queueName) {
    return { id, outcome: 'skipped', detail: `queue "${entry.queue}" does not carry ${record.kind} records` };
  }
  const eventId = eventIdOf(entry.event);
  if (eventId === undefined && !remap) return { id, outcome: 'skipped', detail: 'the entry keeps no event to replay' };
  const recordKey = recordKeyString(record);
  const state = await deps.records.read(record);
  const held = heldEventId(state.eventJson);
  const replay: ReplayDeps = { queue: deps.queues[queueName], keys: deps.keys, deadLetters: deps.deadLetters, trace: deps.trace, retry: deps.retry };
  const at = clock().toISOString();

  if (remap) {
    // The record's latest known state, whichever version it is (also when a newer event superseded
    // the entry): it is marked not applied and its job queued, with the entry's removal, in ONE step.
    if (held === undefined || state.seq <= 0) return { id, outcome: 'skipped', detail: 'the record has no latest state to rebuild the job from' };
    if (queueName === QUEUE_NAMES.vatSubmissions) await reopenRejected(deps, recordKey);
    const trace = { at, step: 'replayed' as const, event_id: held, detail: `entry ${id} (${entry.error.code}) remapped to the latest state by ${actor}` };
    if (!(await replayRecord(replay, { record, entryId: id, trace }))) return { id, outcome: 'superseded', detail: 'the record state is gone' };
    return { id, outcome: 'remapped', detail: `${record.kind} ${record.source}/${record.external_id} queued on ${queueName} from its latest state (event ${held})` };
  }

  if (held !== eventId) {
    // A newer event was received (or the state is gone): the newest state wins (invariant 2) and
    // is sent by its own job; the old version is never sent again. Only the entry goes.
    await dropSupersededEntry(replay, { record, entryId: id, trace: { at, step: 'replayed', event_id: eventId, detail: `entry ${id} superseded by ${held ?? 'nothing held'}; removed by ${actor}` } });
    return { id, outcome: 'superseded', detail: held ? `a newer event (${held}) was received; it is sent instead` : 'the record state is gone' };
  }

  if (queueName === QUEUE_NAMES.vatSubmissions) await reopenRejected(deps, recordKey);

  // An edited entry (`dlq edit`) sends its edited event.
  const how = entry.edited ? 'edited and replayed' : 'replayed';
  const marked = await replayRecord(replay, {
    record,
    entryId: id,
    eventId: eventId!,
    ...(entry.edited ? { editedEventJson: JSON.stringify(entry.event) } : {}),
    trace: { at, step: 'replayed', event_id: eventId, detail: `entry ${id} (${entry.error.code}) ${how} by ${actor}` },
  });
  // A newer event that landed between the read and the transaction: the script left the state alone.
  if (!marked) return { id, outcome: 'superseded', detail: 'a newer event was received meanwhile; it is sent instead' };
  return { id, outcome: 'replayed', detail: `${record.kind} ${record.source}/${record.external_id} queued on ${queueName}${entry.edited ? ' (edited event)' : ''}` };
}

async function replayIngestEntry(deps: DlqDeps, entry: DeadLetterEntry, raw: NonNullable<DeadLetterEntry['raw']>): Promise<ReplayResult> {
  const id = entry.id;
  if (raw.body_truncated) return { id, outcome: 'still-invalid', detail: 'the body was cut when stored; it cannot be read again' };
  const result = parseKeptDelivery(raw, deps.settings, deps.connections);
  if (result.kind === 'invalid') return { id, outcome: 'still-invalid', detail: result.message };
  if (result.kind === 'events' && (result.rejected?.length ?? 0) > 0) {
    return { id, outcome: 'still-invalid', detail: result.rejected!.map((r) => r.message).join('; ') };
  }
  const events = result.kind === 'events' ? result.events : [];
  // The events and the entry's removal in ONE transaction (the delivery marker was set when it
  // was received). Events are idempotent by id: a repeat counts as a duplicate, never twice.
  const stored = await deps.producer.accept({ events, removeDeadLetters: [id] });
  if (result.kind === 'ignored') return { id, outcome: 'ignored', detail: result.reason };
  const counts = { queued: 0, stale: 0, duplicate: 0 };
  for (const outcome of stored.outcomes) counts[outcome] += 1;
  return { id, outcome: 'accepted', detail: `${events.length} event(s): ${counts.queued} queued, ${counts.duplicate} already known, ${counts.stale} stale` };
}

/** Replays one entry (see docs/operations.md, "Replaying entries"). */
export async function replayEntry(deps: DlqDeps, entry: DeadLetterEntry, actor: string, options: { remap?: boolean } = {}): Promise<ReplayResult> {
  // Re-read: it may have been replayed or discarded since the plan was made.
  const current = await deps.deadLetters.get(entry.id);
  if (!current) return { id: entry.id, outcome: 'gone', detail: 'no longer in the dead-letter queue' };
  if (current.record) return replayWorkerEntry(deps, current, current.record, actor, options.remap ?? false);
  if (options.remap) return { id: entry.id, outcome: 'skipped', detail: '--remap needs a record, and an unreadable delivery has none; replay it without --remap' };
  if (current.raw) return replayIngestEntry(deps, current, current.raw);
  return { id: entry.id, outcome: 'skipped', detail: 'the entry has neither a record nor a kept delivery' };
}

export async function replayEntries(
  deps: DlqDeps,
  entries: readonly DeadLetterEntry[],
  options: { actor: string; selection: Selection; remap?: boolean; onProgress?: (done: number, total: number) => void },
): Promise<ReplaySummary> {
  const results: ReplayResult[] = [];
  const counts = { replayed: 0, remapped: 0, superseded: 0, accepted: 0, ignored: 0, 'still-invalid': 0, skipped: 0, gone: 0 } satisfies Record<ReplayOutcome, number>;
  try {
    for (const entry of entries) {
      const result = await replayEntry(deps, entry, options.actor, { remap: options.remap ?? false });
      results.push(result);
      counts[result.outcome] += 1;
      options.onProgress?.(results.length, entries.length);
    }
  } finally {
    // Also after an interruption: what was done is audited.
    const done = Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    const interrupted = results.length < entries.length ? ` (interrupted after ${results.length} of ${entries.length})` : '';
    await deps.audit.append({
      action: 'replay',
      actor: options.actor,
      ...selectionForAudit(options.selection),
      count: results.length,
      outcome: `${options.remap ? '--remap: ' : ''}${done || 'nothing done'}${interrupted}`,
    });
  }
  return { results, counts };
}

// ---------------------------------------------------------------------------------------------
// Status

export interface QueueStatus {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  /** Age of the oldest waiting job in seconds, or null when none waits. */
  oldest_waiting_age_s: number | null;
}

export interface StatusReport {
  queues: Record<string, QueueStatus>;
  dead_letter: DlqTally;
  vat_ledger: VatLedgerStatus;
}

export async function statusReport(deps: Pick<DlqDeps, 'queues' | 'deadLetters' | 'ledger' | 'clock'>): Promise<StatusReport> {
  const now = (deps.clock ?? (() => new Date()))().getTime();
  const queues: Record<string, QueueStatus> = {};
  for (const name of RECORD_QUEUES) {
    const queue = deps.queues[name];
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    const [oldest] = await queue.getJobs(['waiting'], 0, 0, true);
    queues[name] = {
      waiting: counts.waiting ?? 0,
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldest_waiting_age_s: oldest ? Math.max(0, Math.round((now - oldest.timestamp) / 1000)) : null,
    };
  }
  return { queues, dead_letter: await dlqStats(deps), vat_ledger: await vatLedgerStatus(deps.ledger) };
}
