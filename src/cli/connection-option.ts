import type { Connection, Connections } from '../config/connections.js';

/** The connection a command names (`--connection <id>`), or an error listing the ones there are. */
export function namedConnection(connections: Connections, id: string): Connection {
  const found = connections.get(id);
  if (found !== undefined) return found;
  throw new Error(`no connection "${id}": the connections are ${connections.list.map((c) => c.id).join(', ')} (docs/connections.md)`);
}

/**
 * A record's `<connection or source> <id>` as the operator types it (`trace shop-fr 1001`): a
 * connection's id gives its source and puts its prefix in front of the platform's id; anything
 * else is a source with the external id as stored (how records were named before connections).
 */
export function recordOfArguments(connections: Connections, first: string, id: string): { source: string; external_id: string; connection?: Connection } {
  const connection = connections.get(first);
  if (connection === undefined) return { source: first, external_id: id };
  const external = connection.externalIdPrefix !== '' && id.startsWith(connection.externalIdPrefix) ? id : connection.externalIdPrefix + id;
  return { source: connection.source, external_id: external, connection };
}
