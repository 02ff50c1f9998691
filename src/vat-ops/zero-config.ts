import type { Registration, VatClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import { parseSettings, type Settings } from '../config/settings.js';
import { connectionsOf, type Connection, type Connections } from '../config/connections.js';
import { matchRegistration, registrationRef, type VatSettings, type VatSettingsInput } from '../mapping/index.js';
import type { Logger } from '../observability/logger.js';

/**
 * VAT at zero configuration (docs/decisions.md, "Zero configuration"): with TAX_API_URL and
 * TAXSYNC_CONFIG unset, taxsync acts for a seller established in the US that is registered for
 * VAT in Germany. Its sales to German consumers (the demo's WooCommerce order) are German VAT
 * submissions; its US sales and its exports are outside its VAT registrations, so their refunds
 * never need a correction. A German seller would turn every sale abroad into an export reported
 * in Germany, and every refund of one into a manual correction.
 */

/** The seller's entity at the emulator (any UUID is accepted there). */
export const ZERO_CONFIG_ENTITY = '5e11e400-0000-4000-8000-0000000000de';

export const ZERO_CONFIG_VAT: VatSettingsInput = {
  seller_country: 'US',
  registrations: [{ taxable_jurisdiction: 'DE', registration_type: 'standard', entity: ZERO_CONFIG_ENTITY }],
  rates: { DE: { standard: '19.00', reduced: ['7.00'] } },
};

/** What the zero-configuration registration is created with at the emulator. */
const REGISTRATION_FIELDS = { number: 'DE123456789', date_of_registration: '2025-01-01' } as const;

/** True when nothing configures the API or the settings: the emulator and the VAT above apply. */
export const isZeroConfig = (config: Pick<Config, 'usesEmulator' | 'configFile'>): boolean => config.usesEmulator && config.configFile === undefined;

/**
 * The second WooCommerce shop of the zero-configuration start (docs/connections.md, the demo's
 * French shop): its order numbers are its own, so its records carry the prefix `fr-` and its VAT
 * invoice numbers `FR-`; it is established in France.
 */
export const ZERO_CONFIG_FR_SHOP: Connection = {
  id: 'woocommerce-fr',
  platform: 'woocommerce',
  source: 'woocommerce',
  externalIdPrefix: 'fr-',
  webhookSecrets: [],
  shop: 'https://shop.example.fr',
  api: undefined,
  vat: { establishmentCountry: 'FR', invoiceNumberPrefix: 'FR-' },
  declared: false,
  devSecret: 'dev-woocommerce-fr-secret',
};

/** The connections every process uses: at zero configuration without a connections file, the French shop too. */
export function withZeroConfigConnections(config: Pick<Config, 'usesEmulator' | 'configFile' | 'connectionsFile'>, connections: Connections): Connections {
  if (!isZeroConfig(config) || config.connectionsFile !== undefined || connections.get(ZERO_CONFIG_FR_SHOP.id) !== undefined) return connections;
  return connectionsOf([...connections.list, ZERO_CONFIG_FR_SHOP]);
}

/** The settings every process uses: the file's, or at zero configuration the defaults with VAT on. */
export function withZeroConfigVat(config: Pick<Config, 'usesEmulator' | 'configFile'>, settings: Settings): Settings {
  if (!isZeroConfig(config)) return settings;
  return parseSettings({ vat: ZERO_CONFIG_VAT }, 'zero-configuration settings');
}

/**
 * Creates, through the VAT service's own API, each registration of `settings` that the service
 * does not hold yet (the built-in emulator starts empty), so the VAT worker resolves them.
 * Answers the registrations, found or created.
 */
export async function ensureRegistrations(vat: VatClient, settings: VatSettings, logger: Logger): Promise<Registration[]> {
  const wanted = settings.registrations.filter((r) => r.taxable_jurisdiction !== undefined && r.entity !== undefined);
  if (wanted.length === 0) return [];
  const list: Registration[] = [];
  for await (const registration of vat.registrations.iterate()) list.push(registration);
  const out: Registration[] = [];
  for (const r of wanted) {
    const match = matchRegistration(r, list);
    if (match.ok) {
      out.push(match.registration);
      continue;
    }
    const created = await vat.registrations.create({
      taxable_jurisdiction: r.taxable_jurisdiction as string,
      entity: r.entity as string,
      ...(r.registration_type === undefined ? {} : { registration_type: r.registration_type }),
      ...REGISTRATION_FIELDS,
    });
    logger.info({ registration: created.id, entity_jurisdiction: created.entity_jurisdiction }, `created the VAT registration ${registrationRef(r)}`);
    out.push(created);
  }
  return out;
}
