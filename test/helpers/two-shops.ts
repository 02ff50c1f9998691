import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { loadConnections, type Connections } from '../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CanonicalEvent } from '../../src/domain/events.js';

/**
 * Two WooCommerce shops of one source, as docs/connections.md declares them: 'shop-de' writes its
 * order numbers as they are, 'shop-fr' puts 'fr-' in front of them. `env` is what a command is
 * started with (the file and the shops' secrets); `connections` what it reads from it.
 */
export function twoShops(extra: Record<string, string> = {}): { env: Record<string, string>; connections: Connections } {
  const file = join(mkdtempSync(join(tmpdir(), 'taxsync-two-shops-')), 'connections.json');
  writeFileSync(
    file,
    JSON.stringify({
      connections: [
        { id: 'shop-de', platform: 'woocommerce', webhook_secrets_env: ['WC_DE_SECRET'] },
        { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', webhook_secrets_env: ['WC_FR_SECRET'], vat: { invoice_number_prefix: 'FR-' } },
      ],
    }),
  );
  const env = { TAXSYNC_CONNECTIONS: file, WC_DE_SECRET: 'wc-de-secret', WC_FR_SECRET: 'wc-fr-secret', ...extra };
  return { env, connections: loadConnections(loadConfig(env), DEFAULT_SETTINGS, env) };
}

/** A customer event as a connection's webhook leaves it (connector = the connection, its prefix on the id). */
export function customerOf(connection: { id: string; source: string; externalIdPrefix: string }, platformId: string): CanonicalEvent {
  const externalId = connection.externalIdPrefix + platformId;
  return CanonicalEvent.parse({
    id: `evt-${connection.id}-${platformId}`,
    type: 'customer.upserted',
    occurred_at: '2026-11-25T00:00:00Z',
    connector: connection.id,
    record: { kind: 'customer', source: connection.source, external_id: externalId },
    data: { name: externalId },
  });
}
