import type { Secret } from '../domain/secret.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { CONNECTOR_LIST, secretsWithDev } from '../connectors/registry.js';
import type { Connector } from '../connectors/types.js';
import type { EnabledConnector } from '../http/webhooks.js';

export type SecretsById = Readonly<Record<string, readonly Secret[]>>;

/**
 * A connector is enabled when its secret is set; its source comes from settings (else its
 * default), never a payload. `connectors`: the registry's, and in a test its own platform too.
 */
export function enabledConnectors(
  secrets: SecretsById,
  settings: Settings,
  config: Config,
  connectors: readonly Connector[] = CONNECTOR_LIST,
): Record<string, EnabledConnector> {
  const enabled: Record<string, EnabledConnector> = {};
  for (const connector of connectors) {
    const accepted = secrets[connector.id] ?? [];
    if (accepted.length === 0) continue;
    enabled[connector.id] = {
      connector,
      // sourceOf's rule, with the connector's own default (it may be one given besides the registry).
      settings: { source: settings.sources[connector.id] ?? connector.defaultSource, secrets: accepted, toleranceSeconds: config.webhooks.toleranceSeconds },
    };
  }
  return enabled;
}

/** The configured secrets, with development ones for connectors that have none when `withDev` (secretsWithDev). */
export function webhookSecrets(config: Config, withDev: boolean, connectors: readonly Connector[] = CONNECTOR_LIST): SecretsById {
  return secretsWithDev(config.webhookSecrets, withDev, connectors);
}
