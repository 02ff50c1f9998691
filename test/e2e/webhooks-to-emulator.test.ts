import { Decimal } from 'decimal.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, fixture, type Daemon } from '../helpers/daemon.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const fraction = (refunded: string, invoice: string) => new Decimal(refunded).div(invoice).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed();

describe('signed webhooks from every connector reach the tax engine', () => {
  const ctx = useRedis();
  let daemon: Daemon;

  beforeEach(async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await daemon.stop();
  });

  async function send(connector: 'shopify' | 'stripe' | 'woocommerce' | 'erp', path: string) {
    const f = fixture(path);
    const res = await daemon.post(connector, f.body, f.headers, f.contentType);
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(202);
  }

  const byKey = async (source: string, id: string) => {
    try {
      return await daemon.api.tax.transactions.getByKey(source, id);
    } catch {
      return undefined;
    }
  };

  it('syncs invoices with their inline customers, links refunds (even those that arrive first) and attaches ERP exemptions', async () => {
    // The Shopify refund arrives before its order: it waits, then links.
    await send('shopify', 'shopify/refunds-create-partial-with-shipping.json');
    await send('shopify', 'shopify/orders-create-discounts-shipping-taxes.json');
    await send('stripe', 'stripe/invoice-updated-acacia-jpy.json');
    await send('stripe', 'stripe/credit-note-created-partial-shipping.json');
    await send('stripe', 'stripe/invoice-finalized-basil-usd.json');
    await send('woocommerce', 'woocommerce/order-updated-tax-inclusive-guest-refund.json');
    await send('erp', 'erp/batch-customer-invoice-refund-exemption.json');

    await eventually(async () => {
      const wanted = [
        ['shopify', 'refund-987654321012'],
        ['stripe', 'in_1Jpy0001'],
        ['stripe', 'refund-cn_1Part001'],
        ['woocommerce', 'refund-4400-4411'],
        ['api', 'refund-CN-2026-0042'],
      ] as const;
      const found = await Promise.all(wanted.map(([s, id]) => byKey(s, id)));
      return found.every(Boolean);
    }, 30_000);

    // Shopify: 112.50 after discounts with shipping; 27.87 refunded (22.87 of goods + 5.00 shipping).
    const order = await daemon.api.tax.transactions.getByKey('shopify', '5627384902156');
    const refund = await daemon.api.tax.transactions.getByKey('shopify', 'refund-987654321012');
    expect(order.transaction_type).toBe('invoice');
    expect(order.amounts?.final_transaction_amount).toBe('112.50');
    expect(refund).toMatchObject({
      transaction_type: 'refund',
      created_from: order.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: fraction('27.87', '112.50') },
    });
    const customer = await daemon.api.tax.customers.getByKey('shopify', '7301234567890');
    expect(customer.id).toBeTruthy();

    // Stripe JPY: amounts to the yen, never a 100× error.
    const jpy = await daemon.api.tax.transactions.getByKey('stripe', 'in_1Jpy0001');
    expect(jpy.currency_details?.currency).toBe('JPY');
    expect(jpy.items?.map((i) => i.total_price)).toEqual(['3300', '1234']);

    // ERP: invoice 150.00 of goods + 4.90 shipping; refund 75.00 of it; the exemption on its customer.
    const erpRefund = await daemon.api.tax.transactions.getByKey('api', 'refund-CN-2026-0042');
    const erpInvoice = await daemon.api.tax.transactions.getByKey('api', 'INV-2026-0815');
    expect(erpRefund.created_from).toBe(erpInvoice.id);
    expect(erpRefund.refund_info?.refund_linked_percentage).toBe(fraction('75', '154.90'));
    const erpCustomer = await daemon.api.tax.customers.getByKey('api', 'C-2001');
    await eventually(async () => {
      for await (const exemption of daemon.api.tax.exemptions.iterate()) if (exemption.customer_id === erpCustomer.id) return true;
      return false;
    });

    // WooCommerce: the refund inside order.updated is linked to its order.
    const wooOrder = await daemon.api.tax.transactions.getByKey('woocommerce', '4400');
    const wooRefund = await daemon.api.tax.transactions.getByKey('woocommerce', 'refund-4400-4411');
    expect(wooRefund.created_from).toBe(wooOrder.id);
  });
});
