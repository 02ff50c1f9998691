import { isActive, type Connection, type Connections } from '../config/connection-list.js';

/**
 * PURE: connection silence. Per connection (one shop, one Stripe account, one ERP company), the
 * age of the last event taxsync accepted from it; a connection that has sent before and is quiet
 * for longer than the threshold is silent (its webhooks may be off, failing at the platform, or
 * pointing elsewhere). Two shops of one source are two connections: one going quiet while the
 * other sends is seen.
 */
export interface ConnectionAge {
  /** The connection's id (`event.connector`). */
  id: string;
  platform: string;
  source: string;
  /** The connection's external_id_prefix, when it has one. */
  prefix?: string;
  /** Null: it has not sent anything yet. */
  last_event_at: string | null;
  age_s: number | null;
  silent: boolean;
}

/** What the activity store holds (store.ts): the last event per connection, and per source as written before connections. */
export interface RecordedActivity {
  /** connection id → epoch ms of its last accepted event. */
  byConnection: Record<string, string>;
  /** source → epoch ms, written before connections existed (no longer written). */
  bySource: Record<string, string>;
}

const readMs = (text: string | undefined): number | undefined => {
  const ms = Number(text);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
};

/**
 * The connection a field written before connections (keyed by its source) is read as: the active
 * connection that now writes that source's records without a prefix — for the ERP's 'api' the
 * 'erp' connection, for a platform the platform's own — which is the one those events came from.
 * No such active connection: nobody sends what that source sent, so the field is not read (it
 * would otherwise be SILENT forever).
 */
export function successorOf(connections: Connections, source: string): Connection | undefined {
  const c = connections.ofRecord(source, '');
  return c !== undefined && isActive(c) ? c : undefined;
}

/**
 * The epoch ms of each connection's last event, by id. A connection's own field wins; a field
 * written before connections stands for its successor only until the successor has its own.
 */
function lastPerConnection(recorded: RecordedActivity, connections: Connections): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, value] of Object.entries(recorded.byConnection)) {
    const ms = readMs(value);
    if (ms !== undefined) out.set(id, ms);
  }
  for (const [source, value] of Object.entries(recorded.bySource)) {
    const ms = readMs(value);
    const successor = successorOf(connections, source);
    if (ms === undefined || successor === undefined || out.has(successor.id)) continue;
    out.set(successor.id, ms);
  }
  return out;
}

function ageOf(lastMs: number | undefined, now: Date, thresholdMs: number) {
  if (lastMs === undefined) return { last_event_at: null, age_s: null, silent: false };
  const ageMs = Math.max(0, now.getTime() - lastMs);
  return { last_event_at: new Date(lastMs).toISOString(), age_s: Math.floor(ageMs / 1000), silent: ageMs > thresholdMs };
}

/**
 * One row per connection that is active or has sent: the ones that sent, oldest first, then the
 * active ones that never did (listed, never silent: there is no last event to be late). A
 * connection no longer configured is left out: its webhook URL answers 404, it cannot send again,
 * and its last event would be SILENT forever.
 */
export function connectionAges(recorded: RecordedActivity, connections: Connections, now: Date, thresholdMs: number): ConnectionAge[] {
  const last = lastPerConnection(recorded, connections);
  const rows: ConnectionAge[] = connections.list
    .filter((c) => isActive(c) || last.has(c.id))
    .map((c) => ({
      id: c.id,
      platform: c.platform,
      source: c.source,
      ...(c.externalIdPrefix === '' ? {} : { prefix: c.externalIdPrefix }),
      ...ageOf(last.get(c.id), now, thresholdMs),
    }));
  return rows.sort((a, b) => (b.age_s ?? -1) - (a.age_s ?? -1) || a.id.localeCompare(b.id));
}

/** The columns a connection's silence is shown in, by `taxsync status` and the web view alike. */
export const CONNECTION_COLUMNS = ['connection', 'platform', 'source', 'prefix', 'last event', 'age', ''] as const;

/** A connection's row under CONNECTION_COLUMNS; `age` tells seconds as people read them. */
export function connectionCells(c: ConnectionAge, age: (seconds: number) => string): string[] {
  return [c.id, c.platform, c.source, c.prefix ?? '', c.last_event_at ?? 'never', c.age_s === null ? '-' : age(c.age_s), c.silent ? 'SILENT' : ''];
}
