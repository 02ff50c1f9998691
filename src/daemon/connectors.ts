import type { Config } from '../config/index.js';
import { connectionsOf, type Connection, type Connections } from '../config/connections.js';
import { CONNECTOR_LIST } from '../connectors/registry.js';
import type { Connector } from '../connectors/types.js';
import { Secret } from '../domain/secret.js';
import type { EnabledConnector } from '../http/webhooks.js';

/**
 * A connection takes webhooks at `/webhooks/<its id>` when it has a webhook secret; its source and
 * prefix come from the configuration, never a payload. `connectors`: the registry's, and in a test
 * its own platform too.
 */
export function enabledConnections(
  connections: Connections,
  config: Pick<Config, 'webhooks'>,
  connectors: readonly Connector[] = CONNECTOR_LIST,
): Record<string, EnabledConnector> {
  const enabled: Record<string, EnabledConnector> = {};
  for (const connection of connections.list) {
    const connector = connectors.find((c) => c.id === connection.platform);
    if (connector === undefined || connection.webhookSecrets.length === 0) continue;
    enabled[connection.id] = {
      connector,
      connection,
      settings: { source: connection.source, secrets: connection.webhookSecrets, toleranceSeconds: config.webhooks.toleranceSeconds, connection: connection.id },
    };
  }
  return enabled;
}

/**
 * The connections with their development secret (`Connection.devSecret`) where they have no secret,
 * when `withDev` (`taxsync start` on the emulator, and `taxsync demo`, which signs as it): only for a
 * platform no declared connection covers, so a development secret never opens a route beside a
 * shop set up for real.
 */
export function withDevSecrets(connections: Connections, withDev: boolean): Connections {
  if (!withDev) return connections;
  const covered = new Set(connections.list.filter((c) => c.declared).map((c) => c.platform));
  const list = connections.list.map((c): Connection => {
    const dev = c.declared || covered.has(c.platform) || c.webhookSecrets.length > 0 ? undefined : c.devSecret;
    return dev === undefined ? c : { ...c, webhookSecrets: [new Secret(dev)] };
  });
  return connectionsOf(list);
}
