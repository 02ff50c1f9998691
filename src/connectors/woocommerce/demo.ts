import type { ConnectorDemo, DemoSample } from '../types.js';
import { before, gmt, uuidFrom } from '../shared/demo.js';

/**
 * `taxsync demo`'s WooCommerce deliveries (src/demo/samples.ts): a tax-inclusive EUR order of a
 * consumer in Munich, on hold, then paid. The demo sends it to every WooCommerce shop of the
 * daemon, with this number in each (at zero configuration the default shop and the French one,
 * `woocommerce-fr`). The zero-configuration seller is registered for VAT in Germany
 * (src/vat-ops/zero-config.ts): in either shop this order is its German VAT sale. Paying it
 * changes the status only, not the VAT.
 */
export function woocommerceDemo({ run, now }: { run: string; now: Date }): ConnectorDemo {
  const orderId = Number(`44${run}`);
  const address = {
    first_name: 'Greta',
    last_name: 'Gast',
    company: '',
    address_1: 'Hauptstr. 5',
    address_2: '',
    city: 'München',
    state: '',
    postcode: '80331',
    country: 'DE',
  };
  const vat = (total: string) => [{ id: 3, total, subtotal: total }];
  // Bank transfer: WooCommerce holds the order until the money arrives.
  const onHold = {
    id: orderId,
    parent_id: 0,
    number: String(orderId),
    status: 'on-hold',
    currency: 'EUR',
    version: '9.4.1',
    prices_include_tax: true,
    date_created_gmt: gmt(before(now, 5)),
    date_paid_gmt: null,
    date_completed_gmt: null,
    date_modified_gmt: gmt(before(now, 4)),
    discount_total: '0.00',
    discount_tax: '0.00',
    shipping_total: '4.20',
    shipping_tax: '0.80',
    cart_tax: '13.30',
    total: '88.30',
    total_tax: '14.10',
    customer_id: Number(`77${run}`),
    billing: { ...address, email: `greta.${run}@example.org`, phone: '' },
    shipping: { ...address, phone: '' },
    payment_method: 'bacs',
    created_via: 'checkout',
    line_items: [
      {
        id: 201,
        name: 'Tea tin',
        product_id: 61,
        variation_id: 0,
        quantity: 2,
        tax_class: '',
        subtotal: '20.00',
        subtotal_tax: '3.80',
        total: '20.00',
        total_tax: '3.80',
        taxes: vat('3.8'),
        sku: 'TEA-TIN',
        price: 10,
      },
      {
        id: 202,
        name: 'Teapot',
        product_id: 62,
        variation_id: 0,
        quantity: 1,
        tax_class: '',
        subtotal: '50.00',
        subtotal_tax: '9.50',
        total: '50.00',
        total_tax: '9.50',
        taxes: vat('9.5'),
        sku: 'POT-1L',
        price: 50,
      },
    ],
    tax_lines: [
      { id: 210, rate_code: 'DE-MWST-1', rate_id: 3, label: 'MwSt.', compound: false, tax_total: '13.30', shipping_tax_total: '0.80', rate_percent: 19 },
    ],
    shipping_lines: [{ id: 205, method_title: 'DHL', method_id: 'flat_rate', total: '4.20', total_tax: '0.80', taxes: [{ id: 3, total: '0.798', subtotal: '' }] }],
    fee_lines: [],
    coupon_lines: [],
    refunds: [],
  };
  const paid = { ...onHold, status: 'processing', date_paid_gmt: gmt(now), date_modified_gmt: gmt(now) };
  const delivery = (topic: 'order.created' | 'order.updated', body: unknown): DemoSample => ({
    topic,
    headers: {
      'x-wc-webhook-source': 'https://shop.example.com/',
      'x-wc-webhook-topic': topic,
      'x-wc-webhook-resource': 'order',
      'x-wc-webhook-event': topic.slice('order.'.length),
      'x-wc-webhook-id': topic === 'order.created' ? '14' : '15',
      'x-wc-webhook-delivery-id': uuidFrom(run, `woocommerce-delivery-${topic}`).replace(/-/g, ''),
    },
    body,
  });
  return {
    deliveries: [delivery('order.created', onHold)],
    expected: [{ record: 'invoice', external_id: String(orderId) }],
    updates: [
      {
        delivery: delivery('order.updated', paid),
        record: 'invoice',
        external_id: String(orderId),
        change: 'status on-hold → processing (paid)',
      },
    ],
  };
}
