import { Decimal } from 'decimal.js';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { DEV_SECRETS } from '../../src/runtime/connectors.js';
import { DemoRefused, demoSecrets, demoSources, runDemo, type DemoResult } from '../../src/runtime/demo.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { useRedis } from '../helpers/redis.js';

// The daemon as the zero-configuration `taxsync start` runs it: development secrets, and the
// emulator's URL on /healthz. The demo signs with what it finds in an empty environment.
const DEV_ENV = {
  SHOPIFY_WEBHOOK_SECRET: DEV_SECRETS.shopify!,
  STRIPE_WEBHOOK_SECRET: DEV_SECRETS.stripe!,
  WOOCOMMERCE_WEBHOOK_SECRET: DEV_SECRETS.woocommerce!,
  ERP_WEBHOOK_SECRET: DEV_SECRETS.erp!,
};
const fraction = (refunded: string, invoice: string) => new Decimal(refunded).div(invoice).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed();

describe('taxsync demo', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  const demo = (url: string) =>
    runDemo({ url, secrets: demoSecrets(loadConfig({})), sources: demoSources(DEFAULT_SETTINGS), deadlineMs: 25_000, pollIntervalMs: 50 });

  it('sends every platform sample through a running daemon and finds each record in the emulator, refunds linked', async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: DEV_ENV, emulatorOnHealthz: true });
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
      'woocommerce order.updated 202',
      'erp batch 202',
    ]);
    expect(result.records.map((r) => `${r.connector} ${r.record}`)).toEqual([
      'shopify customer',
      'shopify invoice',
      'shopify refund',
      'stripe invoice',
      'stripe refund',
      'woocommerce invoice',
      'woocommerce refund',
      'erp customer',
      'erp invoice',
      'erp exemption',
    ]);
    for (const record of result.records) expect(record, `${record.connector} ${record.record}`).toMatchObject({ arrived: true, tax_id: expect.any(String) });

    const byName = (connector: string, record: string) => result.records.find((r) => r.connector === connector && r.record === record)!;
    // What the emulator holds is what the demo reports.
    const order = await daemon.api.tax.transactions.getByKey('shopify', byName('shopify', 'invoice').external_id);
    expect(byName('shopify', 'invoice')).toMatchObject({ tax_id: order.id, currency: 'USD', amount: '80.00', total_tax: order.tax?.total_tax });
    // Albany, NY is in the emulator's tax table: 4% state + 4% county on goods and shipping.
    expect(order.tax?.total_tax).toBe('6.40');
    // Refunds are linked to their invoice with the exact fraction: one tee of 25.00 out of 80.00;
    // ¥1100 (tax included) out of ¥5500; WooCommerce, tax-inclusive, net over net: the 11.90 refund
    // is 11.90 × (88.30 − 14.10) ÷ 88.30 = 9.9998 → 10.00 net, of an order of 88.30 − 14.10 = 74.20 net.
    expect(byName('shopify', 'refund')).toMatchObject({ linked: true, created_from: order.id, refund_linked_percentage: '0.3125' });
    expect(byName('stripe', 'refund')).toMatchObject({ linked: true, refund_linked_percentage: '0.2', currency: 'JPY' });
    expect(byName('woocommerce', 'refund')).toMatchObject({ linked: true, refund_linked_percentage: fraction('10.00', '74.20'), currency: 'EUR' });
    // WooCommerce lists no refund lines: the refund is one "Refund" item at its net amount 10.00.
    expect(byName('woocommerce', 'refund').amount).toBe('10.00');
    expect(byName('erp', 'exemption').detail).toContain('full US CA');

    // A second run makes new records rather than being deduplicated.
    const again: DemoResult = await demo(daemon.webhookUrl);
    expect(again.ok).toBe(true);
    expect(again.run).not.toBe(result.run);
    const firstIds = new Set(result.records.map((r) => r.tax_id));
    for (const record of again.records) expect(firstIds.has(record.tax_id)).toBe(false);
  });

  it('refuses a daemon that sends to a configured tax engine, before sending anything', async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: DEV_ENV });
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
