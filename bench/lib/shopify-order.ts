import { createHmac, randomUUID } from 'node:crypto';

export const SHOPIFY_SECRET = 'bench-shopify-webhook-secret';

/**
 * A realistic orders/create body of about 2 KB for order `n` (distinct order and customer ids),
 * with the headers Shopify sends, signed with SHOPIFY_SECRET.
 */
export function signedShopifyOrder(n: number): { body: string; headers: Record<string, string> } {
  const id = 5_600_000_000_000 + n;
  const address = {
    first_name: 'Ada',
    last_name: 'Lovelace',
    address1: '12 Analytical Way',
    address2: 'Suite 3',
    city: 'Louisville',
    province: 'Kentucky',
    province_code: 'KY',
    zip: '40202',
    country: 'United States',
    country_code: 'US',
    phone: '555-0100',
  };
  const tax = (price: string) => [{ price, rate: 0.06, title: 'KY State Tax', price_set: { shop_money: { amount: price, currency_code: 'USD' } } }];
  const body = JSON.stringify({
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    name: `#${1000 + n}`,
    order_number: 1000 + n,
    email: `buyer-${n}@example.com`,
    created_at: '2026-11-20T04:58:12-05:00',
    processed_at: '2026-11-20T04:58:12-05:00',
    updated_at: '2026-11-20T04:58:15-05:00',
    currency: 'USD',
    presentment_currency: 'USD',
    financial_status: 'paid',
    taxes_included: false,
    tax_exempt: false,
    subtotal_price: '84.00',
    total_tax: '5.04',
    total_price: '94.04',
    total_discounts: '0.00',
    source_name: 'web',
    customer: {
      id: 7_300_000_000_000 + n,
      email: `buyer-${n}@example.com`,
      first_name: 'Ada',
      last_name: 'Lovelace',
      state: 'enabled',
      tax_exempt: false,
      tax_exemptions: [],
      created_at: '2026-10-01T09:00:00-04:00',
      updated_at: '2026-11-20T04:58:13-05:00',
      default_address: address,
    },
    billing_address: address,
    shipping_address: address,
    line_items: [
      { id: 1_100_000 + n, product_id: 8_800_001, sku: 'HOODIE-M', name: 'Hoodie - M', title: 'Hoodie', price: '60.00', quantity: 1, taxable: true, discount_allocations: [], tax_lines: tax('3.60') },
      { id: 1_200_000 + n, product_id: 8_800_002, sku: 'TEE-L', name: 'Tee - L', title: 'Tee', price: '12.00', quantity: 2, taxable: true, discount_allocations: [], tax_lines: tax('1.44') },
    ],
    shipping_lines: [{ id: 4_400_000 + n, title: 'Standard', code: 'standard', price: '5.00', discount_allocations: [], tax_lines: [] }],
    tax_lines: tax('5.04'),
    note_attributes: [],
    tags: '',
  });
  const headers = {
    'content-type': 'application/json',
    'x-shopify-topic': 'orders/create',
    'x-shopify-shop-domain': 'taxsync-bench.myshopify.com',
    'x-shopify-api-version': '2025-10',
    'x-shopify-event-id': randomUUID(),
    'x-shopify-webhook-id': randomUUID(),
    'x-shopify-triggered-at': new Date().toISOString(),
    'x-shopify-hmac-sha256': createHmac('sha256', SHOPIFY_SECRET).update(body).digest('base64'),
  };
  return { body, headers };
}
