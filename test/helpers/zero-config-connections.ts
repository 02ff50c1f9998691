import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { loadConnections, type Connections } from '../../src/config/connections.js';
import type { Settings } from '../../src/config/settings.js';
import { withDevSecrets } from '../../src/daemon/connectors.js';
import { withZeroConfigConnections, ZERO_CONFIG_FR_SHOP } from '../../src/vat-ops/zero-config.js';

/**
 * The zero-configuration connections for tests. `startDaemon` (test/helpers/daemon.ts) reads its
 * connections from the environment and does not add the French shop that `taxsync start` adds at
 * zero configuration: this file declares that shop (ZERO_CONFIG_FR_SHOP, with its development
 * secret), so a daemon started with TAXSYNC_CONNECTIONS pointing at it has the same connections.
 */
export function zeroConfigConnectionsFile(): string {
  const shop = ZERO_CONFIG_FR_SHOP;
  const file = join(mkdtempSync(join(tmpdir(), 'taxsync-zero-config-')), 'connections.json');
  const connection = {
    id: shop.id,
    platform: shop.platform,
    source: shop.source,
    external_id_prefix: shop.externalIdPrefix,
    ...(shop.shop === undefined ? {} : { shop: shop.shop }),
    webhook_secrets: [shop.devSecret],
    vat: { establishment_country: shop.vat?.establishmentCountry, registrations: shop.vat?.registrations, invoice_number_prefix: shop.vat?.invoiceNumberPrefix },
  };
  writeFileSync(file, JSON.stringify({ connections: [connection] }));
  return file;
}

/**
 * The connections `taxsync demo` finds in an empty environment, as its command builds them: the
 * platforms' defaults and the French shop, each with its development secret.
 */
export function zeroConfigDemoConnections(settings: Settings): Connections {
  const config = loadConfig({});
  return withDevSecrets(withZeroConfigConnections(config, loadConnections(config, settings, {})), true);
}
