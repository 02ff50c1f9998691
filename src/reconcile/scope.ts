import type { Connection, Connections } from '../config/connection-list.js';

/**
 * PURE: which records a `taxsync reconcile` run compares. Two shops of one source write records
 * of that source, told apart by their external_id_prefix: a run limited to one connection
 * compares only the records that are its (Connections.ofRecord, the longest prefix that fits), on
 * taxsync's side and in the engine's lists, so the other shop's records are neither missing nor
 * extra in its report.
 */

/** The connection a run is limited to (`--connection`). */
export interface ReconcileConnection {
  id: string;
  source: string;
  externalIdPrefix: string;
  /** Whether a record of its source with this external id is the connection's. */
  owns(externalId: string): boolean;
}

export function reconcileConnection(connections: Connections, connection: Connection): ReconcileConnection {
  return {
    id: connection.id,
    source: connection.source,
    externalIdPrefix: connection.externalIdPrefix,
    owns: (externalId) => connections.owns(connection.id, connection.source, externalId),
  };
}

export interface Selection {
  /** The sources compared; undefined: every source taxsync writes. */
  sources: ReadonlySet<string> | undefined;
  has(source: string, externalId: string): boolean;
}

/** A connection stands for its source (the sources asked for, if any, are not read then). */
export function selectionOf(options: { sources?: readonly string[]; connection?: ReconcileConnection }): Selection {
  const { connection } = options;
  if (connection !== undefined) return { sources: new Set([connection.source]), has: (source, id) => source === connection.source && connection.owns(id) };
  const sources = options.sources === undefined || options.sources.length === 0 ? undefined : new Set(options.sources);
  return { sources, has: (source) => sources === undefined || sources.has(source) };
}
