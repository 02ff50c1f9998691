import { Secret } from '../domain/secret.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { CONNECTORS, DEV_SECRETS, sourceOf } from '../connectors/registry.js';
import type { EnabledConnector } from '../http/webhooks.js';

export type SecretsById = Readonly<Record<string, readonly Secret[]>>;

/** A connector is enabled when its secret is set; its source comes from settings, never a payload. */
export function enabledConnectors(secrets: SecretsById, settings: Settings, config: Config): Record<string, EnabledConnector> {
  const enabled: Record<string, EnabledConnector> = {};
  for (const [id, connector] of Object.entries(CONNECTORS)) {
    const accepted = secrets[id] ?? [];
    if (accepted.length === 0) continue;
    enabled[id] = {
      connector,
      settings: { source: sourceOf(id, settings), secrets: accepted, toleranceSeconds: config.webhooks.toleranceSeconds },
    };
  }
  return enabled;
}


/** The configured secrets, with development ones for connectors that have none when `withDev`. */
export function webhookSecrets(config: Config, withDev: boolean): SecretsById {
  const out: Record<string, readonly Secret[]> = {};
  for (const id of Object.keys(CONNECTORS)) {
    const configured = (config.webhookSecrets as Record<string, readonly Secret[] | undefined>)[id] ?? [];
    const dev = DEV_SECRETS[id];
    out[id] = configured.length > 0 || !withDev || dev === undefined ? configured : [new Secret(dev)];
  }
  return out;
}
