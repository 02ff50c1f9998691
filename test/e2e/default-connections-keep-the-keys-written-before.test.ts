import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { createLogger } from '../../src/observability/logger.js';
import { createKeys } from '../../src/queue/keys.js';
import { readTrace } from '../../src/queue/trace.js';
import { createVatLedger } from '../../src/queue/vat-ledger.js';
import { ensureRegistrations, withZeroConfigVat } from '../../src/vat-ops/zero-config.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { useRedis } from '../helpers/redis.js';

/**
 * The per-platform variables keep working as they did before connections: each makes the
 * platform's default connection (its name as id, no prefix), whose records, delivery marks,
 * traces and VAT ledger entries have the keys they always had; a connections file added later
 * leaves them where they are (docs/connections.md, "Moving from the variables to a file").
 */

const BASE = '2026-11-20T10:00:00';
/** A WooCommerce order of a consumer in Munich (the REST API's order shape, as test/fixtures/connectors/woocommerce/ holds it): 100.00 EUR + 19% VAT. */
function order(status: string, modified: string) {
  const address = { first_name: 'Greta', last_name: 'Gast', company: '', address_1: 'Hauptstr. 5', address_2: '', city: 'München', state: '', postcode: '80331', country: 'DE' };
  return {
    id: 2002,
    parent_id: 0,
    number: '2002',
    status,
    currency: 'EUR',
    prices_include_tax: false,
    date_created_gmt: BASE,
    date_modified_gmt: modified,
    total: '119.00',
    total_tax: '19.00',
    shipping_total: '0.00',
    customer_id: 0,
    billing: { ...address, email: 'greta@example.org', phone: '' },
    shipping: { ...address, phone: '' },
    line_items: [{ id: 11, name: 'Teapot', product_id: 62, quantity: 1, subtotal: '100.00', subtotal_tax: '19.00', total: '100.00', total_tax: '19.00', sku: 'POT-1L', price: 100 }],
    tax_lines: [],
    shipping_lines: [],
    fee_lines: [],
    coupon_lines: [],
    refunds: [],
  };
}
const headers = (topic: string, delivery: string) => ({
  'x-wc-webhook-source': 'https://shop.example.de/',
  'x-wc-webhook-topic': topic,
  'x-wc-webhook-resource': 'order',
  'x-wc-webhook-event': topic.slice('order.'.length),
  'x-wc-webhook-delivery-id': delivery,
});

describe('the default connection of a platform', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;
  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });
  const settings = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);
  const settled = async () => {
    const until = Date.now() + 20_000;
    while (!(await daemon!.idle()) || (await daemon!.api.tax.transactions.list({ limit: 5 })).data.length === 0) {
      if (Date.now() > until) throw new Error('not settled');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("writes the keys it always wrote, and a connections file added later keeps using them", async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { settings });
    await ensureRegistrations(daemon.api.vat, settings.vat, createLogger({ level: 'silent' }));
    expect((await daemon.post('woocommerce', order('processing', BASE), headers('order.created', 'd-1'))).status).toBe(202);
    await settled();

    // Every key of the record, its delivery and its VAT, as named before connections existed.
    const keys = (await ctx.redis.keys(`${ctx.prefix}:*`)).map((k) => k.slice(ctx.prefix.length + 1)).filter((k) => k.includes('2002'));
    const ej = (await daemon.api.vat.registrations.list()).results[0]!.entity_jurisdiction!;
    expect(keys.sort()).toEqual(
      [
        'applied:transaction|woocommerce|2002',
        'applied:vat|woocommerce|2002',
        // WooCommerce's delivery id is the order's state (the connector's rule); under the platform's name.
        'delivery:woocommerce:order%3A2002%3A2026-11-20T10%3A00%3A00Z%3Aprocessing',
        'state:customer|woocommerce|guest-order-2002',
        'state:transaction|woocommerce|2002',
        'state:vat|woocommerce|2002',
        'trace:transaction|woocommerce|2002',
        'trace:vat|woocommerce|2002',
        `vat:${ej}:2002`,
        `vat:${ej}:2002:history`,
        'vat-of:vat|woocommerce|2002',
      ].sort(),
    );
    const trace = await readTrace(ctx.redis, createKeys(ctx.prefix), 'transaction|woocommerce|2002');
    expect(trace.find((e) => e.step === 'received')?.connector).toBe('woocommerce');
    await daemon.stop();

    // Later: a connections file adds a French shop; the German one stays the platform's default connection.
    const file = join(mkdtempSync(join(tmpdir(), 'taxsync-connections-')), 'connections.json');
    writeFileSync(file, JSON.stringify({ connections: [{ id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', webhook_secrets: ['fr-secret'], vat: { invoice_number_prefix: 'FR-' } }] }));
    daemon = await startDaemon(ctx.url, ctx.prefix, { settings, env: { TAXSYNC_CONNECTIONS: file } });
    await ensureRegistrations(daemon.api.vat, settings.vat, createLogger({ level: 'silent' }));
    expect((await daemon.post('woocommerce', order('completed', '2026-11-21T10:00:00'), headers('order.updated', 'd-2'))).status).toBe(202);
    await settled();
    const state = await ctx.redis.hmget(`${ctx.prefix}:state:transaction|woocommerce|2002`, 'seq', 'applied_seq');
    expect(state).toEqual(['2', '2']);
    expect((await daemon.api.tax.transactions.list({ limit: 10 })).data.map((t) => t.external_id)).toEqual(['2002']);
    const steps = (await readTrace(ctx.redis, createKeys(ctx.prefix), 'transaction|woocommerce|2002')).filter((e) => e.step === 'received');
    expect(steps.map((e) => e.connector)).toEqual(['woocommerce', 'woocommerce']);
    // Its VAT was filed once, under the number it always had.
    const ledger = createVatLedger(ctx.redis, createKeys(ctx.prefix), { leaseMs: 60_000 });
    expect((await ledger.forRecord('vat|woocommerce|2002')).map((e) => `${e.invoice_number} ${e.state}`)).toEqual(['2002 confirmed']);
    expect(daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit')).toHaveLength(0);
  });
});
