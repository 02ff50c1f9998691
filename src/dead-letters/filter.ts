import type { Connections } from '../config/connections.js';
import type { DeadLetterEntry } from '../queue/dead-letter.js';
import { namedConnection } from '../config/named-connection.js';

/**
 * PURE: which dead-letter entries an operator means (`taxsync dlq list|export|discard|replay`
 * filters), and the plan summaries printed before acting.
 */
export interface DlqFilter {
  queue?: string;
  code?: string;
  /** The record's source, or for unreadable deliveries the connector that received them. */
  source?: string;
  externalId?: string;
  /** Entries whose last failure is at or after this time. */
  since?: Date;
  /** Entries whose last failure is before this time. */
  until?: Date;
  /** Case-insensitive text anywhere in the entry (message, field errors, event, raw body…). */
  text?: string;
  /** The entries of one connection (see belongsToConnection). */
  connection?: ConnectionScope;
}

/** A connection named by a filter, with the connections its records are looked up in. */
export interface ConnectionScope {
  id: string;
  /** The installation's connections; undefined (not known): only the connector an event or a delivery names counts. */
  connections?: Connections;
}

export interface DlqFilterOptions {
  queue?: string;
  code?: string;
  source?: string;
  externalId?: string;
  since?: string;
  until?: string;
  text?: string;
  connection?: string;
}

function time(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  // A date alone or a date-time with a zone: anything else is refused rather than guessed.
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)) {
    throw new Error(`--${name} must be an ISO 8601 date or date-time with a time zone, e.g. 2026-11-21 or 2026-11-21T02:00:00Z (got "${value}")`);
  }
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new Error(`--${name} is not a valid date: "${value}"`);
  return at;
}

/**
 * Builds a filter from command-line options; throws with a one-line reason on a bad value. With
 * `connections`, a connection must be one of them (a typo would otherwise match nothing, silently).
 */
export function parseFilter(options: DlqFilterOptions, connections?: Connections): DlqFilter {
  const filter: DlqFilter = {};
  if (options.queue) filter.queue = options.queue;
  if (options.code) filter.code = options.code.toUpperCase();
  if (options.source) filter.source = options.source;
  if (options.externalId) filter.externalId = options.externalId;
  const since = time('since', options.since);
  const until = time('until', options.until);
  if (since) filter.since = since;
  if (until) filter.until = until;
  if (since && until && since.getTime() >= until.getTime()) throw new Error('--since must be before --until');
  if (options.text) filter.text = options.text;
  if (options.connection) {
    filter.connection = connections === undefined ? { id: options.connection } : { id: namedConnection(connections, options.connection).id, connections };
  }
  return filter;
}

export function isEmptyFilter(filter: DlqFilter): boolean {
  return Object.values(filter).every((v) => v === undefined);
}

/** The filter as strings, for the audit log and --json output. */
export function describeFilter(filter: DlqFilter): Record<string, string> {
  const out: Record<string, string> = {};
  if (filter.queue) out.queue = filter.queue;
  if (filter.code) out.code = filter.code;
  if (filter.source) out.source = filter.source;
  if (filter.externalId) out.external_id = filter.externalId;
  if (filter.since) out.since = filter.since.toISOString();
  if (filter.until) out.until = filter.until.toISOString();
  if (filter.text) out.text = filter.text;
  if (filter.connection) out.connection = filter.connection.id;
  return out;
}

export function matchesFilter(entry: DeadLetterEntry, filter: DlqFilter): boolean {
  if (filter.queue !== undefined && entry.queue !== filter.queue) return false;
  if (filter.code !== undefined && entry.error.code !== filter.code) return false;
  if (filter.source !== undefined && entry.record?.source !== filter.source && entry.raw?.connector !== filter.source) return false;
  if (filter.externalId !== undefined && entry.record?.external_id !== filter.externalId) return false;
  const at = Date.parse(entry.last_failed_at);
  if (filter.since !== undefined && !(at >= filter.since.getTime())) return false;
  if (filter.until !== undefined && !(at < filter.until.getTime())) return false;
  if (filter.text !== undefined && !JSON.stringify(entry).toLowerCase().includes(filter.text.toLowerCase())) return false;
  if (filter.connection !== undefined && !belongsToConnection(entry, filter.connection)) return false;
  return true;
}

/** The connector an entry's event names (`event.connector`: the connection that received it). */
function eventConnector(event: unknown): string | undefined {
  const connector = typeof event === 'object' && event !== null ? (event as { connector?: unknown }).connector : undefined;
  return typeof connector === 'string' ? connector : undefined;
}

/** Whether an entry is the connection's: the one it is shown under (entryConnection), so a filter and a list never disagree. */
export function belongsToConnection(entry: DeadLetterEntry, scope: ConnectionScope): boolean {
  return entryConnection(entry, scope.connections) === scope.id;
}

/**
 * The connection an entry is shown under: the one that received its delivery or its event, else
 * the one its record belongs to. Without the connections, whatever connector the entry names.
 */
export function entryConnection(entry: DeadLetterEntry, connections?: Connections): string | undefined {
  if (entry.raw) return entry.raw.connector;
  const named = eventConnector(entry.event);
  if (connections === undefined) return named;
  if (named !== undefined && connections.get(named) !== undefined) return named;
  return entry.record === null ? undefined : connections.ofRecord(entry.record.source, entry.record.external_id)?.id;
}

/** Newest failure first; ties by id so paging is stable. */
export function newestFirst(a: DeadLetterEntry, b: DeadLetterEntry): number {
  const diff = Date.parse(b.last_failed_at) - Date.parse(a.last_failed_at);
  return diff !== 0 ? diff : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export interface DlqTally {
  total: number;
  by_queue: Record<string, number>;
  by_code: Record<string, number>;
}

/** How many entries, by queue and by error code (plans and `dlq stats`). */
export function tally(entries: Iterable<DeadLetterEntry>): DlqTally {
  const out: DlqTally = { total: 0, by_queue: {}, by_code: {} };
  for (const entry of entries) {
    out.total += 1;
    out.by_queue[entry.queue] = (out.by_queue[entry.queue] ?? 0) + 1;
    out.by_code[entry.error.code] = (out.by_code[entry.error.code] ?? 0) + 1;
  }
  return out;
}

/** One line: `5 entries (transactions 3, ingest 2; API_INVALID 3, INVALID_PAYLOAD 2)`. */
export function describeTally(t: DlqTally): string {
  const part = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  if (t.total === 0) return '0 entries';
  return `${t.total} ${t.total === 1 ? 'entry' : 'entries'} (${part(t.by_queue)}; ${part(t.by_code)})`;
}

/** The entry's subject in one cell: the record, or the delivery it came from. */
export function entrySubject(entry: DeadLetterEntry): string {
  if (entry.record) return `${entry.record.kind} ${entry.record.source}/${entry.record.external_id}`;
  if (entry.raw) return `${entry.raw.connector}${entry.raw.topic ? ` ${entry.raw.topic}` : ''}`;
  return '-';
}

/** A plain-text table (columns padded to their widest cell). */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
