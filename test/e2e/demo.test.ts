import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { loadConnections, type Connections } from '../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { withDevSecrets } from '../../src/daemon/connectors.js';
import { createLogger } from '../../src/observability/logger.js';
import { DEV_SECRETS } from '../../src/connectors/registry.js';
import { DemoRefused, demoConnections, runDemo, type DemoResult } from '../../src/demo/run.js';
import { renderDemo } from '../../src/demo/render.js';
import { ensureRegistrations, withZeroConfigVat } from '../../src/vat-ops/zero-config.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { amount } from '../helpers/emulator-clients.js';
import { useRedis } from '../helpers/redis.js';
import { zeroConfigConnectionsFile, zeroConfigDemoConnections } from '../helpers/zero-config-connections.js';

// The daemon as the zero-configuration `taxsync start` runs it: development secrets, the French
// WooCommerce shop beside the default one, and the emulator's URL on /healthz. The demo signs
// with what it finds in an empty environment.
const DEV_ENV = {
  SHOPIFY_WEBHOOK_SECRET: DEV_SECRETS.shopify!,
  STRIPE_WEBHOOK_SECRET: DEV_SECRETS.stripe!,
  WOOCOMMERCE_WEBHOOK_SECRET: DEV_SECRETS.woocommerce!,
  ERP_WEBHOOK_SECRET: DEV_SECRETS.erp!,
};
// What `taxsync start` runs with when nothing is configured: VAT on, a US seller registered in DE.
const ZERO_CONFIG = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);

describe('taxsync demo', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  const demo = (url: string, connections: Connections = zeroConfigDemoConnections(ZERO_CONFIG)) =>
    runDemo({
      url,
      connections: demoConnections(connections),
      redis: ctx.redis,
      prefix: ctx.prefix,
      vat: ZERO_CONFIG.vat,
      deadlineMs: 25_000,
      pollIntervalMs: 50,
    });

  /** A daemon of `env` (over the development secrets) with VAT on, its registration created at the emulator. */
  async function vatDaemon(env: Record<string, string>, emulatorOnHealthz = true): Promise<Daemon> {
    const started = await startDaemon(ctx.url, ctx.prefix, { env: { ...DEV_ENV, ...env }, emulatorOnHealthz, settings: ZERO_CONFIG });
    await ensureRegistrations(started.api.vat, ZERO_CONFIG.vat, createLogger({ level: 'silent' }));
    return started;
  }
  /** The daemon as the zero-configuration `taxsync start` runs it: the two WooCommerce shops. */
  const zeroConfigDaemon = () => vatDaemon({ TAXSYNC_CONNECTIONS: zeroConfigConnectionsFile() });

  it('sends every platform sample through a running daemon, the WooCommerce order to both shops, and finds each record in the emulator, refunds linked', async () => {
    daemon = await zeroConfigDaemon();
    const health: unknown = await (await fetch(`${daemon.webhookUrl}/healthz`)).json();
    expect(health).toEqual({ status: 'ok', api: { kind: 'emulator', url: daemon.emulator.url } });

    const result = await demo(daemon.webhookUrl);
    expect(result.reason).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.emulator).toBe(daemon.emulator.url);
    expect(result.deliveries.map((d) => `${d.connection} ${d.topic} ${d.status}`)).toEqual([
      'shopify customers/create 202',
      'shopify orders/create 202',
      'shopify refunds/create 202',
      'stripe invoice.finalized 202',
      'stripe credit_note.created 202',
      'woocommerce order.created 202',
      'woocommerce-fr order.created 202',
      'erp batch 202',
      // Sent once the orders went through: updates of what both services already hold.
      'woocommerce order.updated 202',
      'woocommerce-fr order.updated 202',
    ]);
    expect(result.records.map((r) => `${r.connection} ${r.record}`)).toEqual([
      'shopify customer',
      'shopify invoice',
      'shopify refund',
      'stripe invoice',
      'stripe refund',
      'woocommerce invoice',
      'woocommerce-fr invoice',
      'erp customer',
      'erp invoice',
      'erp exemption',
    ]);
    for (const record of result.records) expect(record, `${record.connection} ${record.record}`).toMatchObject({ arrived: true, tax_id: expect.any(String) });

    const byName = (connection: string, record: string) => result.records.find((r) => r.connection === connection && r.record === record)!;
    // What the emulator holds is what the demo reports, in the currency's minor units.
    const order = await daemon.api.tax.transactions.getByKey('shopify', byName('shopify', 'invoice').external_id);
    expect(byName('shopify', 'invoice')).toMatchObject({ tax_id: order.id, currency: 'USD', amount: '80.00', total_tax: '6.40' });
    // Albany, NY is in the emulator's tax table: 4% state + 4% county on goods and shipping.
    expect(amount(order.tax?.total_tax)).toBe('6.4');
    // Refunds are linked to their invoice with the exact fraction: one tee of 25.00 out of 80.00;
    // ¥1100 (tax included) out of ¥5500.
    // (The emulator writes the percentage at any scale: compared by value.)
    expect(byName('shopify', 'refund')).toMatchObject({ linked: true, created_from: order.id });
    expect(amount(byName('shopify', 'refund').refund_linked_percentage)).toBe('0.3125');
    expect(byName('stripe', 'refund')).toMatchObject({ linked: true, currency: 'JPY' });
    expect(amount(byName('stripe', 'refund').refund_linked_percentage)).toBe('0.2');
    expect(byName('erp', 'exemption').detail).toContain('full US CA');

    // The same order number in both shops, two records: the French shop's carries its prefix.
    const number = `44${result.run}`;
    const paid = { source: 'woocommerce', currency: 'EUR', platform_id: number, detail: 'updated: status on-hold → processing (paid)' };
    expect(byName('woocommerce', 'invoice')).toMatchObject({ ...paid, external_id: number });
    expect(byName('woocommerce-fr', 'invoice')).toMatchObject({ ...paid, external_id: `fr-${number}` });
    const [de, fr] = await Promise.all([number, `fr-${number}`].map((id) => daemon!.api.tax.transactions.getByKey('woocommerce', id)));
    expect([byName('woocommerce', 'invoice').tax_id, byName('woocommerce-fr', 'invoice').tax_id]).toEqual([de!.id, fr!.id]);
    expect(de!.id).not.toBe(fr!.id);
    // 88.30 EUR tax included in both: the record of one shop is the record of the other, but its own.
    expect(byName('woocommerce-fr', 'invoice').amount).toBe(byName('woocommerce', 'invoice').amount);

    // A second run makes new records rather than being deduplicated.
    const again: DemoResult = await demo(daemon.webhookUrl);
    expect(again.ok).toBe(true);
    expect(again.run).not.toBe(result.run);
    const firstIds = new Set(result.records.map((r) => r.tax_id));
    for (const record of again.records) expect(firstIds.has(record.tax_id)).toBe(false);
    // One VAT submission per shop and run reached the service, however many events touched its invoice.
    expect(daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit').map((e) => e.status)).toEqual([201, 201, 201, 201]);
  });

  it("submits each shop's German VAT once under its own number, leaves the US and Japanese sales and their refunds out, and does not resend when only the status changes", async () => {
    daemon = await zeroConfigDaemon();
    const result = await demo(daemon.webhookUrl);
    expect(result.reason).toBeUndefined();
    expect(result.vat.enabled).toBe(true);
    const order = result.records.find((r) => r.connection === 'woocommerce')!.platform_id;
    const rows = result.vat.rows.map((r) => `${r.connection} ${r.record}${r.change ? ' update' : ''}: ${r.outcome}`);
    expect(rows).toEqual([
      'shopify invoice: not sent',
      'shopify refund: not sent',
      'stripe invoice: not sent',
      'stripe refund: not sent',
      'woocommerce invoice: submitted',
      'woocommerce-fr invoice: submitted',
      'erp invoice: not sent',
      'woocommerce invoice update: not sent',
      'woocommerce-fr invoice update: not sent',
    ]);
    // The order is 88.30 gross at 19% with prices including tax: 2 × (10.00 + 1.90) + (50.00 + 9.50)
    // + shipping (4.20 + 0.80) = 23.80 + 59.50 + 5.00 = 88.30; net = 88.30 × 100 / 119 = 74.2016…
    // → 74.20; VAT = 88.30 − 74.20 = 14.10. The French shop (established in FR) sells the same
    // order to the same consumer in Munich: a consumer in a country where the seller holds a
    // domestic registration is a local sale there (docs/vat.md, "Which registration", rule 2):
    // German VAT under the German registration, as for the German shop.
    for (const [connection, number] of [
      ['woocommerce', order],
      ['woocommerce-fr', `FR-${order}`],
    ] as const) {
      const [invoice, update] = result.vat.rows.filter((r) => r.connection === connection);
      const once = { invoice_number: number, state: 'confirmed', received: { count: 1, statuses: [201] } };
      expect(invoice!.submissions, connection).toEqual([expect.objectContaining({ ...once, net: '74.20', vat: '14.10', currency: 'EUR' })]);
      // Paying the order changed its status only: the VAT service still got it once.
      expect(update!.change).toBe('status on-hold → processing (paid)');
      expect(update!.submissions, `${connection} update`).toEqual([expect.objectContaining(once)]);
    }
    for (const row of result.vat.rows.filter((r) => !r.connection.startsWith('woocommerce'))) expect(row.submissions, `${row.connection} ${row.record}`).toEqual([]);
    expect(result.vat.rows.find((r) => r.connection === 'shopify' && r.record === 'invoice')!.detail).toMatch(/from US to US .* no registration/);

    // Both under the one German registration, and the quarter of the orders to file.
    const registration = (await daemon.api.vat.registrations.list()).results[0]!;
    const submitted = result.vat.rows.filter((r) => r.connection.startsWith('woocommerce') && r.change === undefined).map((r) => r.submissions[0]!);
    expect(submitted.map((s) => s.entity_jurisdiction)).toEqual([registration.entity_jurisdiction, registration.entity_jurisdiction]);
    const start = submitted[0]!.reporting_period!;
    const month = Number(start.slice(5, 7));
    expect((month - 1) % 3).toBe(0);
    const quarterEnd = new Date(Date.UTC(Number(start.slice(0, 4)), month + 2, 0)).toISOString().slice(0, 10);
    expect(result.vat.filing).toMatchObject({ registration_id: registration.id, period: `${start.slice(0, 4)}-Q${(month + 2) / 3}`, start, end: quarterEnd });
    expect(result.vat.filing!.commands[0]).toBe(`npx taxsync vat filings create --registration-filing-type ${registration.id} --start ${start} --end ${quarterEnd}`);

    // The printed output says what happened to each and how to go on.
    const printed = renderDemo(result);
    expect(printed).toContain('not sent: VAT');
    expect(printed).toMatch(new RegExp(`woocommerce +invoice +${order} +${order} +EUR 74\\.20 +14\\.10 +1 \\(201\\) +submitted`));
    expect(printed).toMatch(new RegExp(`woocommerce-fr +invoice +fr-${order} +FR-${order} +EUR 74\\.20 +14\\.10 +1 \\(201\\) +submitted`));
    expect(printed).toMatch(/woocommerce-fr +invoice update +fr-\d+ +FR-\d+ +EUR 74\.20 +14\.10 +1 \(201\) +status on-hold → processing \(paid\): not sent/);
    expect(printed).toContain(`npx taxsync vat reconcile --period ${result.vat.filing!.period} --filing`);
    expect(printed).toContain(`npx taxsync trace woocommerce ${order}`);
    expect(printed).toContain(`npx taxsync trace woocommerce-fr ${order}`);
  });

  it('sends only to the connections the daemon has: its own connections file, one declared shop with its site and no woocommerce-fr', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'taxsync-demo-')), 'connections.json');
    const shop = { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', shop: 'https://shop.example.fr', webhook_secrets: ['shop-fr-secret'], vat: { establishment_country: 'FR', invoice_number_prefix: 'FR-' } };
    writeFileSync(file, JSON.stringify({ connections: [shop] }));
    // The platform's default connection has no secret: only the declared shop takes WooCommerce webhooks.
    const env = { ...DEV_ENV, TAXSYNC_CONNECTIONS: file, WOOCOMMERCE_WEBHOOK_SECRET: '' };
    daemon = await vatDaemon(env);
    // What `taxsync demo` finds in that environment: no development secret beside a declared shop.
    const connections = withDevSecrets(loadConnections(loadConfig(env), ZERO_CONFIG, env), true);
    const result = await demo(daemon.webhookUrl, connections);
    expect(result.reason).toBeUndefined();
    expect(result.deliveries.map((d) => d.connection)).toEqual(['shopify', 'shopify', 'shopify', 'stripe', 'stripe', 'shop-fr', 'erp', 'shop-fr']);
    // The daemon checked the shop the deliveries named (another would have been a 403).
    const invoice = result.records.find((r) => r.connection === 'shop-fr')!;
    expect(invoice).toMatchObject({ record: 'invoice', external_id: `fr-44${result.run}`, arrived: true });
    expect(result.vat.rows.filter((r) => r.connection === 'shop-fr' && r.change === undefined).flatMap((r) => r.submissions.map((s) => s.invoice_number))).toEqual([`FR-44${result.run}`]);
  });

  it('refuses to go on when the daemon has no route for a connection the demo sends to (404), as for a disabled platform', async () => {
    daemon = await vatDaemon({});
    await expect(demo(daemon.webhookUrl)).rejects.toThrow(/woocommerce-fr order\.created: the daemon takes no webhooks for connection "woocommerce-fr" \(404\)/);
  });

  it('refuses a daemon that sends to a configured tax engine, before sending anything', async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: DEV_ENV, settings: ZERO_CONFIG });
    expect(((await (await fetch(`${daemon.webhookUrl}/healthz`)).json()) as { api: unknown }).api).toEqual({ kind: 'configured' });
    await expect(demo(daemon.webhookUrl)).rejects.toThrow(DemoRefused);
    await expect(demo(daemon.webhookUrl)).rejects.toThrow(/not the built-in emulator/);
    expect((await daemon.api.tax.customers.list()).data).toEqual([]);
    expect(await daemon.idle()).toBe(true);
  });

  it('says so when no daemon answers', async () => {
    await expect(demo('http://127.0.0.1:1')).rejects.toThrow(/no taxsync daemon answers at http:\/\/127\.0\.0\.1:1/);
  });
});
