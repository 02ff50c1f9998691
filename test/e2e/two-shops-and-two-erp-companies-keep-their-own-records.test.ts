import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CONNECTORS } from '../../src/connectors/registry.js';
import { createLogger } from '../../src/observability/logger.js';
import { ensureRegistrations, withZeroConfigVat } from '../../src/vat-ops/zero-config.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { amount } from '../helpers/emulator-clients.js';
import { useRedis } from '../helpers/redis.js';

/**
 * Two WooCommerce shops (a German and a French one) number their orders alike, and so do two ERP
 * companies: each connection keeps its own records in the tax engine (its prefix on every id), its
 * refunds link to its own invoice with its own fraction, and each shop's VAT invoice is submitted
 * once under its own number (docs/connections.md).
 */

const SECRETS = {
  WC_DE_SECRET: 'wc-de-webhook-secret',
  WC_FR_SECRET: 'wc-fr-webhook-secret',
  ERP_A_SECRET: 'whsec_ZXJwLWNvbXBhbnktYS1zZWNyZXQtMzItYnl0ZXMh',
  ERP_B_SECRET: 'whsec_ZXJwLWNvbXBhbnktYi1zZWNyZXQtMzItYnl0ZXMh',
};

const CONNECTIONS = {
  connections: [
    { id: 'shop-de', platform: 'woocommerce', shop: 'https://shop.example.de', webhook_secrets_env: ['WC_DE_SECRET'] },
    { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', shop: 'https://shop.example.fr', webhook_secrets_env: ['WC_FR_SECRET'], vat: { invoice_number_prefix: 'FR-' } },
    { id: 'erp-a', platform: 'erp', external_id_prefix: 'a-', webhook_secrets_env: ['ERP_A_SECRET'], vat: { invoice_number_prefix: 'A-' } },
    { id: 'erp-b', platform: 'erp', external_id_prefix: 'b-', webhook_secrets_env: ['ERP_B_SECRET'], vat: { invoice_number_prefix: 'B-' } },
  ],
};

/**
 * Order 1001 of a consumer in Munich, in the shape of the WooCommerce REST API's order (the
 * "Order properties" of its documentation, as test/fixtures/connectors/woocommerce/ holds them):
 * one line of 100.00 EUR with 19% VAT on top, total 119.00, refunded `refund` EUR by refund 501.
 */
function order(refund: string | undefined, modified: string) {
  const address = { first_name: 'Greta', last_name: 'Gast', company: '', address_1: 'Hauptstr. 5', address_2: '', city: 'München', state: '', postcode: '80331', country: 'DE' };
  return {
    id: 1001,
    parent_id: 0,
    number: '1001',
    status: refund === undefined ? 'processing' : 'completed',
    currency: 'EUR',
    prices_include_tax: false,
    date_created_gmt: '2026-11-20T10:00:00',
    date_modified_gmt: modified,
    discount_total: '0.00',
    discount_tax: '0.00',
    shipping_total: '0.00',
    shipping_tax: '0.00',
    cart_tax: '19.00',
    total: '119.00',
    total_tax: '19.00',
    customer_id: 0,
    billing: { ...address, email: 'greta@example.org', phone: '' },
    shipping: { ...address, phone: '' },
    line_items: [
      { id: 11, name: 'Teapot', product_id: 62, variation_id: 0, quantity: 1, tax_class: '', subtotal: '100.00', subtotal_tax: '19.00', total: '100.00', total_tax: '19.00', taxes: [{ id: 3, total: '19', subtotal: '19' }], sku: 'POT-1L', price: 100 },
    ],
    tax_lines: [{ id: 21, rate_code: 'DE-MWST-1', rate_id: 3, label: 'MwSt.', compound: false, tax_total: '19.00', shipping_tax_total: '0.00', rate_percent: 19 }],
    shipping_lines: [],
    fee_lines: [],
    coupon_lines: [],
    refunds: refund === undefined ? [] : [{ id: 501, reason: 'Damaged', total: `-${refund}` }],
  };
}

/** An ERP company's invoice INV-1 (to a US customer: outside the VAT registrations) and its refund, as canonical events. */
function erpInvoiceAndRefund(company: string, price: string, refund: string) {
  const at = '2026-11-20T10:00:00Z';
  const customer = { external_id: 'C-1', name: `Customer of ${company}`, addresses: { billing: { street: '1 Main St', city: 'Austin', state: 'TX', zip: '73301', country: 'US' } } };
  return [
    {
      id: `${company}-inv-1`,
      type: 'invoice.upserted',
      occurred_at: at,
      record: { kind: 'transaction', external_id: 'INV-1' },
      data: { number: 'INV-1', issued_at: at, status: 'active', currency: 'USD', tax_inclusive: false, customer, lines: [{ id: '1', unit_price: price, quantity: '1' }] },
    },
    {
      id: `${company}-ref-1`,
      type: 'refund.created',
      occurred_at: '2026-11-20T11:00:00Z',
      record: { kind: 'transaction', external_id: 'refund-INV-1-1' },
      data: { invoice_external_id: 'INV-1', issued_at: '2026-11-20T11:00:00Z', currency: 'USD', amount: refund },
    },
  ];
}

describe('two WooCommerce shops and two ERP companies with the same numbers', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;
  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  async function post(connection: string, platform: 'woocommerce' | 'erp', secret: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const raw = Buffer.from(JSON.stringify(body));
    return fetch(`${daemon!.webhookUrl}/webhooks/${connection}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', ...headers, ...CONNECTORS[platform]!.sign(raw, secret, new Date()) },
    });
  }
  const wooHeaders = (site: string, topic: string, delivery: string) => ({
    'x-wc-webhook-source': `${site}/`,
    'x-wc-webhook-topic': topic,
    'x-wc-webhook-resource': 'order',
    'x-wc-webhook-event': topic.slice('order.'.length),
    'x-wc-webhook-delivery-id': delivery,
  });

  async function settled(check: () => Promise<boolean>): Promise<void> {
    const until = Date.now() + 30_000;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('not settled before the deadline');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('keep two records each, refunds linked to their own invoice, and one VAT submission per shop under its own number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-connections-'));
    const file = join(dir, 'connections.json');
    writeFileSync(file, JSON.stringify(CONNECTIONS));
    // A US seller registered for VAT in Germany: the Munich orders are German VAT sales.
    const settings = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      env: { ...SECRETS, TAXSYNC_CONNECTIONS: file, WOOCOMMERCE_WEBHOOK_SECRET: '', ERP_WEBHOOK_SECRET: '' },
      settings,
    });
    await ensureRegistrations(daemon.api.vat, settings.vat, createLogger({ level: 'silent' }));

    for (const [connection, site, secret] of [
      ['shop-de', 'https://shop.example.de', SECRETS.WC_DE_SECRET],
      ['shop-fr', 'https://shop.example.fr', SECRETS.WC_FR_SECRET],
    ] as const) {
      expect((await post(connection, 'woocommerce', secret, order(undefined, '2026-11-20T10:00:00'), wooHeaders(site, 'order.created', `${connection}-1`))).status).toBe(202);
    }
    await settled(async () => (await daemon!.api.tax.transactions.list({ limit: 10 })).data.length === 2 && (await daemon!.idle()));
    // The German shop refunds half of its order, the French shop a quarter of its own.
    expect((await post('shop-de', 'woocommerce', SECRETS.WC_DE_SECRET, order('59.50', '2026-11-21T10:00:00'), wooHeaders('https://shop.example.de', 'order.updated', 'de-2'))).status).toBe(202);
    expect((await post('shop-fr', 'woocommerce', SECRETS.WC_FR_SECRET, order('29.75', '2026-11-21T10:00:00'), wooHeaders('https://shop.example.fr', 'order.updated', 'fr-2'))).status).toBe(202);
    // Company A's invoice is 200.00, refunded 50.00 (a quarter); company B's is 80.00, refunded 40.00 (half).
    expect((await post('erp-a', 'erp', SECRETS.ERP_A_SECRET, erpInvoiceAndRefund('a', '200.00', '50.00'))).status).toBe(202);
    expect((await post('erp-b', 'erp', SECRETS.ERP_B_SECRET, erpInvoiceAndRefund('b', '80.00', '40.00'))).status).toBe(202);

    const tax = daemon.api.tax.transactions;
    await settled(async () => (await tax.list({ limit: 20 })).data.length === 8 && (await daemon!.idle()));
    const de = await tax.getByKey('woocommerce', '1001');
    const fr = await tax.getByKey('woocommerce', 'fr-1001');
    expect(de.id).not.toBe(fr.id);
    const deRefund = await tax.getByKey('woocommerce', 'refund-1001-501');
    const frRefund = await tax.getByKey('woocommerce', 'fr-refund-1001-501');
    expect(deRefund.created_from).toBe(de.id);
    expect(frRefund.created_from).toBe(fr.id);
    // 59.50 of 119.00 is a half; 29.75 of 119.00 a quarter.
    expect(amount(deRefund.refund_info?.refund_linked_percentage)).toBe('0.5');
    expect(amount(frRefund.refund_info?.refund_linked_percentage)).toBe('0.25');

    const a = await tax.getByKey('api', 'a-INV-1');
    const b = await tax.getByKey('api', 'b-INV-1');
    expect(a.id).not.toBe(b.id);
    const aRefund = await tax.getByKey('api', 'a-refund-INV-1-1');
    const bRefund = await tax.getByKey('api', 'b-refund-INV-1-1');
    expect([aRefund.created_from, bRefund.created_from]).toEqual([a.id, b.id]);
    expect(amount(aRefund.refund_info?.refund_linked_percentage)).toBe('0.25');
    expect(amount(bRefund.refund_info?.refund_linked_percentage)).toBe('0.5');
    // Each company's customer C-1 is its own.
    expect((await daemon.api.tax.customers.getByKey('api', 'a-C-1')).name).toBe('Customer of a');
    expect((await daemon.api.tax.customers.getByKey('api', 'b-C-1')).name).toBe('Customer of b');

    // One VAT submission per shop, each under its own invoice number, each accepted once.
    const submissions = daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit');
    const numbers = submissions.map((e) => `${e.record?.key.split(':').slice(2).join(':')} ${e.status}`).sort();
    expect(numbers).toEqual(['1001 201', 'FR-1001 201']);
  });

  it("refuses a delivery signed with another shop's secret, or naming another shop, and queues nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-connections-'));
    const file = join(dir, 'connections.json');
    writeFileSync(file, JSON.stringify(CONNECTIONS));
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: { ...SECRETS, TAXSYNC_CONNECTIONS: file, WOOCOMMERCE_WEBHOOK_SECRET: '', ERP_WEBHOOK_SECRET: '' } });
    const body = order(undefined, '2026-11-20T10:00:00');
    const signedByDe = await post('shop-fr', 'woocommerce', SECRETS.WC_DE_SECRET, body, wooHeaders('https://shop.example.fr', 'order.created', 'x-1'));
    expect(signedByDe.status).toBe(401);
    const otherShop = await post('shop-fr', 'woocommerce', SECRETS.WC_FR_SECRET, body, wooHeaders('https://shop.example.de', 'order.created', 'x-2'));
    expect(otherShop.status).toBe(403);
    expect(((await otherShop.json()) as { message: string }).message).toBe(
      'the delivery is from https://shop.example.de (x-wc-webhook-source); connection "shop-fr" takes only https://shop.example.fr',
    );
    // The platform's default route is off: no WooCommerce secret of its own is set.
    expect((await post('woocommerce', 'woocommerce', SECRETS.WC_DE_SECRET, body, wooHeaders('https://shop.example.de', 'order.created', 'x-3'))).status).toBe(404);
    const counts = await daemon.queues.transactions.getJobCounts();
    expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(0);
    expect((await daemon.api.tax.transactions.list({ limit: 10 })).data).toEqual([]);
  });
});
