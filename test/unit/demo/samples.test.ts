import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { loadConnections } from '../../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { Secret } from '../../../src/domain/secret.js';
import { CONNECTOR_LIST, CONNECTORS, DEV_SECRETS } from '../../../src/connectors/registry.js';
import { namespaced } from '../../../src/connectors/namespace.js';
import { withDevSecrets } from '../../../src/daemon/connectors.js';
import { demoConnections, type DemoConnection } from '../../../src/demo/run.js';
import { DEMO_CONNECTORS, buildDemoSamples } from '../../../src/demo/samples.js';
import { withZeroConfigVat, ZERO_CONFIG_FR_SHOP } from '../../../src/vat-ops/zero-config.js';
import { acmeConnector } from '../../helpers/fifth-platform/index.js';
import { zeroConfigDemoConnections } from '../../helpers/zero-config-connections.js';

const now = new Date('2026-11-20T10:00:00Z');
const ZERO_CONFIG = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);
/** The connections `taxsync demo` sends to at zero configuration. */
const CONNECTIONS: DemoConnection[] = demoConnections(zeroConfigDemoConnections(ZERO_CONFIG));

/** Every delivery of a run, verified with its connection's secret and read as its connection writes it. */
function parse(run: string) {
  const samples = buildDemoSamples({ run, now, connections: CONNECTIONS });
  return [...samples.deliveries, ...samples.updates.map((u) => u.delivery)].map((delivery) => {
    const connection = CONNECTIONS.find((c) => c.id === delivery.connection)!;
    const connector = CONNECTORS[delivery.platform]!;
    const rawBody = Buffer.from(JSON.stringify(delivery.body));
    const headers = Object.fromEntries(
      Object.entries({ ...delivery.headers, ...connector.sign(rawBody, connection.secret, now) }).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const req = { headers, rawBody, contentType: 'application/json', receivedAt: now };
    const settings = { source: connection.source, secrets: [new Secret(connection.secret)], toleranceSeconds: 300, connection: connection.id };
    expect(connector.verify(req, settings), `${delivery.connection} ${delivery.topic}`).toEqual({ ok: true });
    return { delivery, headers, result: namespaced(connector.parse(req, settings), { id: connection.id, source: connection.source, externalIdPrefix: connection.externalIdPrefix }) };
  });
}

describe('demo samples', () => {
  it('parse into canonical events on every connection, with no part rejected', () => {
    for (const { delivery, result } of parse('123456789')) {
      expect(result.kind, `${delivery.connection} ${delivery.topic}: ${JSON.stringify(result)}`).toBe('events');
      if (result.kind === 'events') expect(result.rejected ?? []).toEqual([]);
    }
  });

  it('produce an event for every record the demo waits for, with the external id its connection writes', () => {
    const samples = buildDemoSamples({ run: '123456789', now, connections: CONNECTIONS });
    const produced = parse('123456789').flatMap(({ result }) => (result.kind === 'events' ? result.events.map((e) => `${e.connector}:${e.record.external_id}`) : []));
    for (const expected of samples.expected) expect(produced).toContain(`${expected.connection}:${expected.external_id}`);
  });

  it('give each run its own record ids and delivery ids', () => {
    const ids = (run: string) => parse(run).flatMap(({ result }) => (result.kind === 'events' ? [result.deliveryId, ...result.events.map((e) => e.record.external_id)] : []));
    const first = ids('111111111');
    for (const id of ids('222222222')) expect(first).not.toContain(id);
  });

  it('send the WooCommerce order to both shops: the same number, each signed with its own secret, naming its own site', () => {
    expect(CONNECTIONS.filter((c) => c.platform === 'woocommerce')).toEqual([
      expect.objectContaining({ id: 'woocommerce', externalIdPrefix: '', secret: DEV_SECRETS.woocommerce }),
      expect.objectContaining({ id: 'woocommerce-fr', externalIdPrefix: 'fr-', secret: ZERO_CONFIG_FR_SHOP.devSecret }),
    ]);
    const woo = parse('123456789').filter(({ delivery }) => delivery.platform === 'woocommerce');
    expect(woo.map(({ delivery }) => `${delivery.connection} ${delivery.topic}`)).toEqual([
      'woocommerce order.created',
      'woocommerce-fr order.created',
      'woocommerce order.updated',
      'woocommerce-fr order.updated',
    ]);
    const [de, fr] = woo;
    expect(fr!.delivery.body).toEqual(de!.delivery.body);
    expect(de!.headers['x-wc-webhook-source']).toBe('https://shop.example.com/');
    // Its own site: the one it declares when it declares one (the daemon checks it), else one named after it.
    expect(fr!.headers['x-wc-webhook-source']).toBe(ZERO_CONFIG_FR_SHOP.shop);
    expect(de!.headers['x-wc-webhook-signature']).not.toBe(fr!.headers['x-wc-webhook-signature']);

    const samples = buildDemoSamples({ run: '123456789', now, connections: CONNECTIONS });
    expect(samples.expected.filter((e) => e.connection.startsWith('woocommerce'))).toEqual([
      { connection: 'woocommerce', record: 'invoice', external_id: '44123456789', platform_id: '44123456789' },
      { connection: 'woocommerce-fr', record: 'invoice', external_id: 'fr-44123456789', platform_id: '44123456789' },
    ]);
    expect(samples.updates.map((u) => `${u.connection} ${u.external_id} ${u.platform_id}`)).toEqual(['woocommerce 44123456789 44123456789', 'woocommerce-fr fr-44123456789 44123456789']);
  });

  it('update the WooCommerce order by its status only: the same invoice, later, paid', () => {
    for (const shop of ['woocommerce', 'woocommerce-fr']) {
      const events = parse('123456789').filter(({ delivery }) => delivery.connection === shop);
      const invoices = events.flatMap(({ result }) => (result.kind === 'events' ? result.events.filter((e) => e.type === 'invoice.upserted') : []));
      expect(invoices, shop).toHaveLength(2);
      const [first, update] = invoices as [(typeof invoices)[number], (typeof invoices)[number]];
      expect(update.record).toEqual(first.record);
      expect(update.occurred_at > first.occurred_at).toBe(true);
      expect((first.data as { status: string }).status).toBe('active');
      expect((update.data as { status: string }).status).toBe('paid');
      // Everything the VAT body is made of stays as it was.
      const { status: _a, updated_at: _b, ...before } = first.data as Record<string, unknown>;
      const { status: _c, updated_at: _d, ...after } = update.data as Record<string, unknown>;
      expect(after).toEqual(before);
    }
  });

  it('come from each connector of the registry, in its order, each platform default first', () => {
    expect(DEMO_CONNECTORS).toEqual(['shopify', 'stripe', 'woocommerce', 'erp']);
    const order = [...new Set(buildDemoSamples({ run: '123456789', now, connections: CONNECTIONS }).deliveries.map((d) => d.connection))];
    expect(order).toEqual(['shopify', 'stripe', 'woocommerce', 'woocommerce-fr', 'erp']);
    // Without connections: each platform's default, with its development secret.
    expect([...new Set(buildDemoSamples({ run: '123456789', now }).deliveries.map((d) => d.connection))]).toEqual(DEMO_CONNECTORS);
  });

  it("take a fifth platform's samples from its definition alone, tagged with its id, and they parse on it", () => {
    const samples = buildDemoSamples({ run: '123456789', now, connectors: [...CONNECTOR_LIST, acmeConnector] });
    const acme = samples.deliveries.filter((d) => d.connection === 'acme');
    expect(acme).toHaveLength(1);
    expect(samples.deliveries.at(-1)).toBe(acme[0]);
    expect(samples.expected).toContainEqual({ connection: 'acme', record: 'customer', external_id: 'ACME-DEMO-123456789', platform_id: 'ACME-DEMO-123456789' });

    const rawBody = Buffer.from(JSON.stringify(acme[0]!.body));
    const req = { headers: acmeConnector.sign(rawBody, 'acme-secret', now), rawBody, contentType: 'application/json', receivedAt: now };
    const settings = { source: 'api', secrets: [new Secret('acme-secret')], toleranceSeconds: 300 };
    expect(acmeConnector.verify(req, settings)).toEqual({ ok: true });
    const parsed = acmeConnector.parse(req, settings);
    expect(parsed.kind === 'events' ? parsed.events.map((e) => e.record.external_id) : parsed).toEqual(['ACME-DEMO-123456789']);
  });
});

describe('the connections the demo sends to', () => {
  it('are the daemon connections that take webhooks, signing with the configured secret (the first during a rotation), else the development one', () => {
    const env = { SHOPIFY_WEBHOOK_SECRET: 'mine,old' };
    const found = demoConnections(withDevSecrets(loadConnections(loadConfig(env), ZERO_CONFIG, env), true));
    expect(found.map((c) => [c.id, c.secret])).toEqual([
      ['shopify', 'mine'],
      ['stripe', DEV_SECRETS.stripe],
      ['woocommerce', DEV_SECRETS.woocommerce],
      ['erp', DEV_SECRETS.erp],
    ]);
    expect(found.find((c) => c.id === 'shopify')!.secretFrom).toContain('SHOPIFY_WEBHOOK_SECRET');
  });

  it('leave out a platform default that a declared shop covers, and name the declared shop in its deliveries', () => {
    const declared = { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', shop: 'https://Shop.Example.fr/', webhook_secrets: ['shop-fr-secret'] };
    const env = { TAXSYNC_CONNECTIONS: writeConnections([declared]) };
    const resolved = loadConnections(loadConfig(env), ZERO_CONFIG, env);
    const found = demoConnections(withDevSecrets(resolved, true));
    expect(found.map((c) => c.id)).toEqual(['shopify', 'stripe', 'shop-fr', 'erp']);
    const shop = found.find((c) => c.id === 'shop-fr')!;
    expect(shop).toMatchObject({ secret: 'shop-fr-secret', externalIdPrefix: 'fr-', shop: 'https://shop.example.fr' });
    expect(shop.secretFrom).toContain('TAXSYNC_CONNECTIONS');
    const delivery = buildDemoSamples({ run: '1', now, connections: found }).deliveries.find((d) => d.connection === 'shop-fr')!;
    expect(delivery.headers['x-wc-webhook-source']).toBe('https://shop.example.fr');
  });
});

function writeConnections(list: unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'taxsync-demo-unit-')), 'connections.json');
  writeFileSync(file, JSON.stringify({ connections: list }));
  return file;
}
