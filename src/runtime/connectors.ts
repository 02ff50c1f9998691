import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { CONNECTORS } from '../connectors/registry.js';
import type { EnabledConnector } from '../http/webhooks.js';

/** A connector is enabled when its secret is set; its source comes from settings, never a payload. */
export function enabledConnectors(config: Config, settings: Settings): Record<string, EnabledConnector> {
  const enabled: Record<string, EnabledConnector> = {};
  for (const [id, connector] of Object.entries(CONNECTORS)) {
    const secrets = (config.webhookSecrets as Record<string, Config['webhookSecrets']['shopify'] | undefined>)[id] ?? [];
    if (secrets.length === 0) continue;
    enabled[id] = {
      connector,
      settings: {
        source: settings.sources[id] ?? connector.defaultSource,
        secrets,
        toleranceSeconds: config.webhooks.toleranceSeconds,
      },
    };
  }
  return enabled;
}
