import type { Connection, Connections } from '../config/connections.js';

// The commands' `--connection <id>`; defined with the configuration so the dead-letter filter shares it.
export { namedConnection } from '../config/named-connection.js';

/**
 * A record's `<connection or source> <id>` as the operator types it (`trace shop-fr 1001`): a
 * connection's id gives its source and puts its prefix in front of the platform's id; anything
 * else is a source with the external id as stored (how records were named before connections).
 */
export function recordOfArguments(connections: Connections, first: string, id: string): { source: string; external_id: string; connection?: Connection } {
  const connection = connections.get(first);
  if (connection === undefined) return { source: first, external_id: id };
  // Always put in front, never guessed from the id: ids a seller chooses (an ERP's, Stripe's) can
  // begin like a prefix, and `resend erp-b b-7` must not reach the record `b-7` of another connection.
  return { source: connection.source, external_id: connection.externalIdPrefix + id, connection };
}

/**
 * The record `recordOfArguments` named, for an answer such as "no record … is known": with the
 * connection when the operator named one by an id that is not its source (a default connection's
 * id is its source, and such answers read as they did before connections).
 */
export function describeNamedRecord(first: string, named: ReturnType<typeof recordOfArguments>): string {
  const which = `${named.source}/${named.external_id}`;
  return named.connection === undefined || first === named.source ? which : `${which} (connection ${named.connection.id})`;
}
