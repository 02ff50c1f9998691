import type { Connection, Connections } from './connection-list.js';

/**
 * The connection an operator names (`--connection <id>`, the web view's connection filter), or an
 * error listing the ones there are: a typo must not quietly select nothing. Here, below the CLI,
 * so the dead-letter filter and the web view say it in the same words as the commands.
 */
export function namedConnection(connections: Connections, id: string): Connection {
  const found = connections.get(id);
  if (found !== undefined) return found;
  throw new Error(`no connection "${id}": the connections are ${connections.list.map((c) => c.id).join(', ')} (docs/connections.md)`);
}
