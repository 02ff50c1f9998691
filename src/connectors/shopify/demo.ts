import type { ConnectorDemo } from '../types.js';
import { before, iso, uuidFrom } from '../shared/demo.js';

/**
 * `taxsync demo`'s Shopify deliveries (src/demo/samples.ts): a customer, a tax-exclusive USD order
 * in Albany, NY, and a refund of one of its lines.
 */
export function shopifyDemo({ run, now }: { run: string; now: Date }): ConnectorDemo {
  const customerId = Number(`73${run}`);
  const orderId = Number(`56${run}`);
  const refundId = Number(`98${run}`);
  const address = {
    address1: '12 Analytical Way',
    address2: 'Suite 3',
    city: 'Albany',
    province: 'New York',
    province_code: 'NY',
    country: 'United States',
    country_code: 'US',
    zip: '12207',
  };
  const customer = {
    id: customerId,
    email: `ada.${run}@example.com`,
    created_at: iso(before(now, 30 * 24 * 60)),
    updated_at: iso(before(now, 3)),
    first_name: 'Ada',
    last_name: 'Lovelace',
    state: 'enabled',
    tax_exempt: false,
    tax_exemptions: [],
    currency: 'USD',
    default_address: { ...address, default: true },
  };
  // What the shop charged: 4% state and 4% county tax, the same amount each.
  const salesTax = (each: string) => [
    { price: each, rate: 0.04, title: 'NY State Tax' },
    { price: each, rate: 0.04, title: 'Albany County Tax' },
  ];
  const tee = {
    id: 14567890123401,
    product_id: 8123456789012,
    sku: 'TEE-ORG-M',
    name: 'Organic Tee - M',
    title: 'Organic Tee',
    price: '25.00',
    quantity: 2,
    taxable: true,
    discount_allocations: [],
    tax_lines: salesTax('2.00'),
  };
  const orderAt = iso(before(now, 2));
  const order = {
    id: orderId,
    name: `#D${run}`,
    created_at: orderAt,
    processed_at: orderAt,
    updated_at: orderAt,
    cancelled_at: null,
    financial_status: 'paid',
    currency: 'USD',
    taxes_included: false,
    customer,
    billing_address: address,
    shipping_address: address,
    line_items: [
      tee,
      {
        id: 14567890123403,
        product_id: 8123456789014,
        sku: 'STK-3',
        name: 'Sticker pack',
        title: 'Sticker pack',
        price: '5.00',
        quantity: 3,
        taxable: true,
        discount_allocations: [],
        tax_lines: salesTax('0.60'),
      },
    ],
    shipping_lines: [{ id: 4400000000001, title: 'Standard', price: '15.00', is_removed: false, discount_allocations: [], tax_lines: salesTax('0.60') }],
    subtotal_price: '65.00',
    total_tax: '6.40',
    total_price: '86.40',
  };
  const money = (amount: string) => ({
    shop_money: { amount, currency_code: 'USD' },
    presentment_money: { amount, currency_code: 'USD' },
  });
  const refundAt = iso(before(now, 1));
  const refund = {
    id: refundId,
    order_id: orderId,
    created_at: refundAt,
    processed_at: refundAt,
    note: 'Customer returned one tee',
    restock: true,
    refund_line_items: [
      {
        id: 660000000001,
        quantity: 1,
        line_item_id: tee.id,
        restock_type: 'return',
        subtotal: 25,
        total_tax: 2,
        subtotal_set: money('25.00'),
        total_tax_set: money('2.00'),
        line_item: tee,
      },
    ],
    refund_shipping_lines: [],
    order_adjustments: [],
    transactions: [{ id: 990000000001, order_id: orderId, kind: 'refund', status: 'success', amount: '27.00', currency: 'USD' }],
  };
  const headers = (topic: string, n: number) => ({
    'x-shopify-shop-domain': 'taxsync-demo.myshopify.com',
    'x-shopify-api-version': '2025-10',
    'x-shopify-topic': topic,
    'x-shopify-event-id': uuidFrom(run, `shopify-event-${n}`),
    'x-shopify-webhook-id': uuidFrom(run, `shopify-webhook-${n}`),
    'x-shopify-triggered-at': iso(now),
  });
  return {
    deliveries: [
      { topic: 'customers/create', headers: headers('customers/create', 1), body: customer },
      { topic: 'orders/create', headers: headers('orders/create', 2), body: order },
      { topic: 'refunds/create', headers: headers('refunds/create', 3), body: refund },
    ],
    expected: [
      { record: 'customer', external_id: String(customerId) },
      { record: 'invoice', external_id: String(orderId) },
      { record: 'refund', external_id: `refund-${refundId}`, invoice_external_id: String(orderId) },
    ],
  };
}
