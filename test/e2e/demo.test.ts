import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { createLogger } from '../../src/observability/logger.js';
import { DEV_SECRETS } from '../../src/connectors/registry.js';
import { DemoRefused, demoSecrets, demoSources, runDemo, type DemoResult } from '../../src/demo/run.js';
import { renderDemo } from '../../src/demo/render.js';
import { ensureRegistrations, withZeroConfigVat } from '../../src/vat-ops/zero-config.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { amount } from '../helpers/emulator-clients.js';
import { useRedis } from '../helpers/redis.js';

// The daemon as the zero-configuration `taxsync start` runs it: development secrets, and the
// emulator's URL on /healthz. The demo signs with what it finds in an empty environment.
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

  const demo = (url: string) =>
    runDemo({
      url,
      secrets: demoSecrets(loadConfig({})),
      sources: demoSources(ZERO_CONFIG),
      redis: ctx.redis,
      prefix: ctx.prefix,
      vat: ZERO_CONFIG.vat,
      deadlineMs: 25_000,
      pollIntervalMs: 50,
    });

  /** The daemon as the zero-configuration `taxsync start` runs it: VAT on, its registration created at the emulator. */
  async function zeroConfigDaemon(): Promise<Daemon> {
    const started = await startDaemon(ctx.url, ctx.prefix, { env: DEV_ENV, emulatorOnHealthz: true, settings: ZERO_CONFIG });
    await ensureRegistrations(started.api.vat, ZERO_CONFIG.vat, createLogger({ level: 'silent' }));
    return started;
  }

  it('sends every platform sample through a running daemon and finds each record in the emulator, refunds linked', async () => {
    daemon = await zeroConfigDaemon();
    const health: unknown = await (await fetch(`${daemon.webhookUrl}/healthz`)).json();
    expect(health).toEqual({ status: 'ok', api: { kind: 'emulator', url: daemon.emulator.url } });

    const result = await demo(daemon.webhookUrl);
    expect(result.reason).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.emulator).toBe(daemon.emulator.url);
    expect(result.deliveries.map((d) => `${d.connector} ${d.topic} ${d.status}`)).toEqual([
      'shopify customers/create 202',
      'shopify orders/create 202',
      'shopify refunds/create 202',
      'stripe invoice.finalized 202',
      'stripe credit_note.created 202',
      'woocommerce order.created 202',
      'erp batch 202',
      // Sent once the order went through: an update of what both services already hold.
      'woocommerce order.updated 202',
    ]);
    expect(result.records.map((r) => `${r.connector} ${r.record}`)).toEqual([
      'shopify customer',
      'shopify invoice',
      'shopify refund',
      'stripe invoice',
      'stripe refund',
      'woocommerce invoice',
      'erp customer',
      'erp invoice',
      'erp exemption',
    ]);
    for (const record of result.records) expect(record, `${record.connector} ${record.record}`).toMatchObject({ arrived: true, tax_id: expect.any(String) });

    const byName = (connector: string, record: string) => result.records.find((r) => r.connector === connector && r.record === record)!;
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
    expect(byName('woocommerce', 'invoice')).toMatchObject({ currency: 'EUR', detail: 'updated: status on-hold → processing (paid)' });
    expect(byName('erp', 'exemption').detail).toContain('full US CA');

    // A second run makes new records rather than being deduplicated.
    const again: DemoResult = await demo(daemon.webhookUrl);
    expect(again.ok).toBe(true);
    expect(again.run).not.toBe(result.run);
    const firstIds = new Set(result.records.map((r) => r.tax_id));
    for (const record of again.records) expect(firstIds.has(record.tax_id)).toBe(false);
    // One VAT submission per run reached the service, however many events touched its invoice.
    expect(daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit').map((e) => e.status)).toEqual([201, 201]);
  });

  it("submits the German order's VAT once, leaves the US and Japanese sales and their refunds out, and does not resend it when only its status changes", async () => {
    daemon = await zeroConfigDaemon();
    const result = await demo(daemon.webhookUrl);
    expect(result.reason).toBeUndefined();
    expect(result.vat.enabled).toBe(true);
    const order = result.records.find((r) => r.connector === 'woocommerce')!.external_id;
    const rows = result.vat.rows.map((r) => `${r.connector} ${r.record}${r.change ? ' update' : ''}: ${r.outcome}`);
    expect(rows).toEqual([
      'shopify invoice: not sent',
      'shopify refund: not sent',
      'stripe invoice: not sent',
      'stripe refund: not sent',
      'woocommerce invoice: submitted',
      'erp invoice: not sent',
      'woocommerce invoice update: not sent',
    ]);
    const [invoice, update] = result.vat.rows.filter((r) => r.connector === 'woocommerce');
    // The order is 88.30 gross at 19% with prices including tax: 2 × (10.00 + 1.90) + (50.00 + 9.50)
    // + shipping (4.20 + 0.80) = 23.80 + 59.50 + 5.00 = 88.30; net = 88.30 × 100 / 119 = 74.2016…
    // → 74.20; VAT = 88.30 − 74.20 = 14.10.
    expect(invoice!.submissions).toEqual([
      expect.objectContaining({ invoice_number: order, net: '74.20', vat: '14.10', currency: 'EUR', state: 'confirmed', received: { count: 1, statuses: [201] } }),
    ]);
    // Paying the order changed its status only: the VAT service still got it once.
    expect(update!.change).toBe('status on-hold → processing (paid)');
    expect(update!.submissions).toEqual([expect.objectContaining({ invoice_number: order, state: 'confirmed', received: { count: 1, statuses: [201] } })]);
    for (const row of result.vat.rows.filter((r) => r.connector !== 'woocommerce')) expect(row.submissions, `${row.connector} ${row.record}`).toEqual([]);
    expect(result.vat.rows.find((r) => r.connector === 'shopify' && r.record === 'invoice')!.detail).toMatch(/from US to US .* no registration/);

    // The filing to reconcile: the registration the daemon filed under, and the quarter of the order.
    const registration = (await daemon.api.vat.registrations.list()).results[0]!;
    const submitted = invoice!.submissions[0]!;
    expect(submitted.entity_jurisdiction).toBe(registration.entity_jurisdiction);
    const start = submitted.reporting_period!;
    const month = Number(start.slice(5, 7));
    expect((month - 1) % 3).toBe(0);
    const quarterEnd = new Date(Date.UTC(Number(start.slice(0, 4)), month + 2, 0)).toISOString().slice(0, 10);
    expect(result.vat.filing).toMatchObject({ registration_id: registration.id, period: `${start.slice(0, 4)}-Q${(month + 2) / 3}`, start, end: quarterEnd });
    expect(result.vat.filing!.commands[0]).toBe(`npx taxsync vat filings create --registration-filing-type ${registration.id} --start ${start} --end ${quarterEnd}`);

    // The printed output says what happened to each and how to go on.
    const printed = renderDemo(result);
    expect(printed).toContain('not sent: VAT');
    expect(printed).toMatch(/woocommerce +invoice update +\d+ +\d+ +EUR 74\.20 +14\.10 +1 \(201\) +status on-hold → processing \(paid\): not sent/);
    expect(printed).toContain(`npx taxsync vat reconcile --period ${result.vat.filing!.period} --filing`);
    expect(printed).toContain(`npx taxsync trace woocommerce ${order}`);
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
