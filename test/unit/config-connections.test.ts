import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { loadConnections } from '../../src/config/connections.js';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../src/config/settings.js';
import { numberedIdsCanBegin } from '../../src/connectors/types.js';
import { hasCode } from '../../src/domain/errors.js';
import type { Secret } from '../../src/domain/secret.js';

/** The connections of an environment and, when given, a connections file written for it. */
function connectionsOf(env: Record<string, string>, file?: unknown, settings: Settings = DEFAULT_SETTINGS) {
  const path = file === undefined ? undefined : join(mkdtempSync(join(tmpdir(), 'taxsync-connections-')), 'connections.json');
  if (path !== undefined) writeFileSync(path, typeof file === 'string' ? file : JSON.stringify(file));
  const full = path === undefined ? env : { ...env, TAXSYNC_CONNECTIONS: path };
  return loadConnections(loadConfig(full), settings, full);
}

function failure(env: Record<string, string>, file?: unknown, settings?: Settings): string {
  try {
    connectionsOf(env, file, settings);
  } catch (error) {
    expect(hasCode(error, 'CONFIG_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected the connections to be refused');
}

const VAT_DE = parseSettings({ vat: { seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }, { taxable_jurisdiction: 'FR', country: 'FR' }] } });

describe('connections', () => {
  it('are one default connection per platform without a file: the platform as id, no prefix, its variables', () => {
    const connections = connectionsOf({ WOOCOMMERCE_WEBHOOK_SECRET: 'a,b', STRIPE_API_KEY: 'rk_test_1' });
    expect(connections.list.map((c) => `${c.id} ${c.platform} ${c.source} "${c.externalIdPrefix}"`)).toEqual([
      'shopify shopify shopify ""',
      'stripe stripe stripe ""',
      'woocommerce woocommerce woocommerce ""',
      'erp erp api ""',
    ]);
    expect(connections.get('woocommerce')!.webhookSecrets.map((s) => s.reveal())).toEqual(['a', 'b']);
    expect((connections.get('stripe')!.api as { apiKey: Secret }).apiKey.reveal()).toBe('rk_test_1');
    expect(connections.get('erp')!.declared).toBe(false);
  });

  it('reads a file: secrets and credentials named by variable or given, the shop normalised, VAT facts, and the platforms it does not declare as defaults', () => {
    const connections = connectionsOf(
      { WC_FR: 'fr-secret', WC_FR_KEY: 'ck_fr', SHOPIFY_WEBHOOK_SECRET: 'shp' },
      {
        connections: [
          {
            id: 'shop-fr',
            platform: 'woocommerce',
            external_id_prefix: 'fr-',
            shop: 'https://Shop.Example.FR/',
            webhook_secrets_env: ['WC_FR'],
            api: { api_url: 'https://shop.example.fr', consumer_key_env: 'WC_FR_KEY', consumer_secret: 'cs_fr' },
            vat: { establishment_country: 'FR', registrations: ['FR'], invoice_number_prefix: 'FR-' },
          },
          { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['de-secret'] },
        ],
      },
      VAT_DE,
    );
    const fr = connections.get('shop-fr')!;
    expect(fr).toMatchObject({ platform: 'woocommerce', source: 'woocommerce', externalIdPrefix: 'fr-', shop: 'https://shop.example.fr', declared: true, secretVariables: ['WC_FR'] });
    expect(fr.webhookSecrets.map((s) => s.reveal())).toEqual(['fr-secret']);
    expect(fr.api).toMatchObject({ apiUrl: 'https://shop.example.fr', pagePauseMs: 500 });
    expect((fr.api as { consumerKey: Secret }).consumerKey.reveal()).toBe('ck_fr');
    expect(fr.vat).toEqual({ establishmentCountry: 'FR', registrations: ['FR'], invoiceNumberPrefix: 'FR-' });
    expect(connections.get('shopify')!.webhookSecrets.map((s) => s.reveal())).toEqual(['shp']);
    // A record belongs to the connection with the longest prefix that fits it.
    expect(connections.ofRecord('woocommerce', 'fr-1001')?.id).toBe('shop-fr');
    expect(connections.ofRecord('woocommerce', '1001')?.id).toBe('shop-de');
  });

  it('refuses every problem at once, naming the connection and the field, never a secret', () => {
    const message = failure(
      { WC_DE: 'de-secret-value' },
      {
        connections: [
          { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['literal-secret-value'] },
          { id: 'shop-de', platform: 'woocommerce', webhook_secrets_env: ['WC_DE'] },
          { id: 'shop-x', platform: 'magento', webhook_secrets: ['another-literal-secret'] },
          { id: 'shop-y', platform: 'woocommerce', webhook_secrets_env: ['WC_UNSET'] },
          { id: 'Bad Id', platform: 'erp' },
          { id: 'shop-z', platform: 'shopify', api: { access_token: 'shpat_secret_token', api_url: 'not a url' } },
        ],
      },
    );
    expect(message).toContain('connections[1] "shop-de": the id "shop-de" is declared twice');
    expect(message).toContain('connections[2] "shop-x": platform "magento" is not one taxsync knows (shopify, stripe, woocommerce, erp)');
    expect(message).toContain('connections[3] "shop-y": webhook_secrets_env names WC_UNSET, which is not set');
    expect(message).toContain('connections[4] "Bad Id": id must be 1 to 63 lowercase letters');
    expect(message).toContain('connections[5] "shop-z": api.api_url');
    // "shop-de" and "shop-y" both write WooCommerce ids with no prefix.
    expect(message).toContain('connections "shop-de" and "shop-y" both write source "woocommerce" with the external_id_prefix ""');
    for (const secret of ['literal-secret-value', 'de-secret-value', 'another-literal-secret', 'shpat_secret_token']) expect(message).not.toContain(secret);
  });

  it('lets a shop without a prefix be joined by one with a prefix no platform id begins with, but not by one that could be an id', () => {
    const woo = (prefix: string) => ({
      connections: [
        { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['a'] },
        { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: prefix, webhook_secrets: ['b'] },
      ],
    });
    expect(connectionsOf({}, woo('fr-')).get('shop-fr')!.externalIdPrefix).toBe('fr-');
    expect(failure({}, woo('1'))).toContain('"shop-de"\'s ids could carry "shop-fr"\'s prefix "1" (a woocommerce id (numbers, refund-<number>-<number>, guest-order-<number>) can begin with "1")');
    expect(failure({}, woo('guest'))).toContain('can begin with "guest"');
    // ERP ids are the ERP's own: any text. Prefixes must be apart.
    const erp = { connections: [{ id: 'erp-a', platform: 'erp', webhook_secrets: ['whsec_YQ=='] }, { id: 'erp-b', platform: 'erp', external_id_prefix: 'b-', webhook_secrets: ['whsec_Yg=='] }] };
    expect(failure({}, erp)).toContain('(erp ids can begin with anything)');
  });

  it("refuses a platform's variable the file's connection of that name does not take", () => {
    const file = { connections: [{ id: 'woocommerce', platform: 'woocommerce', webhook_secrets: ['x'] }] };
    expect(failure({ WOOCOMMERCE_WEBHOOK_SECRET: 'y' }, file)).toContain(
      'WOOCOMMERCE_WEBHOOK_SECRET is set, but the connections file declares the connection "woocommerce": name it there (webhook_secrets_env: ["WOOCOMMERCE_WEBHOOK_SECRET"]) or unset it',
    );
    const named = { connections: [{ id: 'woocommerce', platform: 'woocommerce', webhook_secrets_env: ['WOOCOMMERCE_WEBHOOK_SECRET'] }] };
    expect(connectionsOf({ WOOCOMMERCE_WEBHOOK_SECRET: 'y' }, named).get('woocommerce')!.declared).toBe(true);
    expect(failure({}, { connections: [{ id: 'stripe', platform: 'woocommerce' }] })).toContain('the id "stripe" is the name of the stripe platform');
  });

  it('refuses a VAT registration no settings hold, and two shops that would number their VAT invoices alike under one registration', () => {
    const shops = (fr: Record<string, unknown>) => ({
      connections: [
        { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['a'] },
        { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', webhook_secrets: ['b'], vat: fr },
      ],
    });
    expect(failure({}, shops({ registrations: ['IT'] }), VAT_DE)).toContain('connection "shop-fr": vat.registrations names "IT", which no configured VAT registration is (DE/standard, FR/standard)');
    expect(failure({}, shops({ establishment_country: 'FR' }), VAT_DE)).toContain(
      'connections "shop-de" and "shop-fr" can both submit VAT under DE/standard, FR/standard with invoice numbers prefixed ""',
    );
    expect(connectionsOf({}, shops({ invoice_number_prefix: 'FR-' }), VAT_DE).get('shop-fr')!.vat).toEqual({ invoiceNumberPrefix: 'FR-' });
    // Registrations apart: numbers may repeat.
    const apart = { connections: [{ id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['a'], vat: { registrations: ['DE'] } }, { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', webhook_secrets: ['b'], vat: { registrations: ['FR'] } }] };
    expect(connectionsOf({}, apart, VAT_DE).list).toHaveLength(6);
  });

  it('says which file cannot be read or is not JSON', () => {
    expect(failure({}, '{"connections": [')).toMatch(/TAXSYNC_CONNECTIONS: .*connections\.json is not valid JSON/);
    expect(failure({}, { shops: [] })).toContain('connections must be');
  });
});

describe("a platform's numbered ids", () => {
  it('can begin with digits and with the literal parts of their shapes, nothing else', () => {
    const woo = (text: string) => numberedIdsCanBegin(['', 'refund-', 'guest-order-'], text);
    expect(['12', 'refund', 'refund-7', 'refund-7-1', 'guest-order-', 'g', ''].map(woo)).toEqual([true, true, true, true, true, true, true]);
    expect(['fr-', 'de_', 'x1', 'refund-x', 'guest-order-7a'].map(woo)).toEqual([false, false, false, false, false]);
  });
});
