// Over 400 lines on purpose: the demo's sample deliveries are data, one story read top to bottom
// (one function per platform). Moving each into its connector's folder is the next step (issue 18).
import { createHash } from 'node:crypto';

/**
 * The sample deliveries of `taxsync demo`: what Shopify, Stripe, WooCommerce and the ERP would
 * send, shaped like the connector fixtures (test/fixtures/connectors/) but trimmed to what taxsync
 * reads. Every record id carries the run id, so a second run creates new records instead of being
 * deduplicated, and every timestamp is taken from `now`, so signatures and stale checks pass.
 */

export type DemoConnector = 'shopify' | 'stripe' | 'woocommerce' | 'erp';

/** One webhook delivery, before signing: the signature headers are added when it is sent. */
export interface DemoDelivery {
  connector: DemoConnector;
  /** Topic or event type, for messages. */
  topic: string;
  headers: Record<string, string>;
  body: unknown;
}

interface Expected {
  connector: DemoConnector;
  external_id: string;
}

/** A record the demo expects in the tax engine once the daemon has synced its deliveries. */
export type DemoExpectation =
  | (Expected & { record: 'customer' | 'invoice' })
  | (Expected & { record: 'refund'; invoice_external_id: string })
  | (Expected & { record: 'exemption'; customer_external_id: string; certificate_id: string });

/**
 * A later state of a record the first deliveries created, sent once the first state went through
 * (so it is an update of what the services already hold, not coalesced with it).
 */
export interface DemoUpdate {
  delivery: DemoDelivery;
  connector: DemoConnector;
  record: 'invoice';
  external_id: string;
  /** What changed, for people. */
  change: string;
}

export interface DemoSamples {
  run: string;
  deliveries: DemoDelivery[];
  expected: DemoExpectation[];
  updates: DemoUpdate[];
}

/** A UUID-shaped id derived from the run, so the samples are a pure function of run and time. */
function uuidFrom(run: string, label: string): string {
  const hex = createHash('sha256').update(`${run}:${label}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const iso = (at: Date) => at.toISOString();
const unix = (at: Date) => Math.floor(at.getTime() / 1000);
/** WooCommerce `*_gmt`: UTC without a zone designator. */
const gmt = (at: Date) => at.toISOString().slice(0, 19);
const before = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);

/**
 * The samples of one run. `run` is a string of digits (Shopify and WooCommerce ids are numbers);
 * `now` dates every change a few minutes back, in the order a shop would produce them.
 */
export function buildDemoSamples(options: { run: string; now: Date }): DemoSamples {
  const { run, now } = options;
  if (!/^\d{1,12}$/.test(run)) throw new Error(`demo run id must be 1 to 12 digits, got ${JSON.stringify(run)}`);
  const shopify = shopifySamples(run, now);
  const stripe = stripeSamples(run, now);
  const woo = wooSamples(run, now);
  const erp = erpSamples(run, now);
  return {
    run,
    deliveries: [...shopify.deliveries, ...stripe.deliveries, ...woo.deliveries, ...erp.deliveries],
    expected: [...shopify.expected, ...stripe.expected, ...woo.expected, ...erp.expected],
    updates: woo.updates,
  };
}

type Part = Pick<DemoSamples, 'deliveries' | 'expected'>;

// ——— Shopify: a customer, a tax-exclusive USD order in Albany, NY, a refund of one of its lines ———

function shopifySamples(run: string, now: Date): Part {
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
      { connector: 'shopify', topic: 'customers/create', headers: headers('customers/create', 1), body: customer },
      { connector: 'shopify', topic: 'orders/create', headers: headers('orders/create', 2), body: order },
      { connector: 'shopify', topic: 'refunds/create', headers: headers('refunds/create', 3), body: refund },
    ],
    expected: [
      { connector: 'shopify', record: 'customer', external_id: String(customerId) },
      { connector: 'shopify', record: 'invoice', external_id: String(orderId) },
      { connector: 'shopify', record: 'refund', external_id: `refund-${refundId}`, invoice_external_id: String(orderId) },
    ],
  };
}

// ——— Stripe: a finalized JPY invoice (zero-decimal, tax included) and a credit note for one tin ———

function stripeSamples(run: string, now: Date): Part {
  const invoiceId = `in_demo${run}`;
  const creditNoteId = `cn_demo${run}`;
  const customerId = `cus_demo${run}`;
  const jct = (amount: number, taxable: number) => ({ amount, inclusive: true, tax_rate: 'txr_demo_jp10', taxable_amount: taxable });
  const invoice = {
    id: invoiceId,
    object: 'invoice',
    number: `JP-${run}`,
    status: 'open',
    currency: 'jpy',
    created: unix(before(now, 2)),
    status_transitions: { finalized_at: unix(before(now, 2)), paid_at: null },
    customer: customerId,
    customer_name: '山田太郎',
    customer_email: `taro.${run}@example.jp`,
    customer_address: { line1: '1-1 Chiyoda', line2: null, city: 'Chiyoda', state: 'Tokyo', postal_code: '100-0001', country: 'JP' },
    customer_shipping: null,
    customer_tax_exempt: 'none',
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: 'il_demo_tea',
          object: 'line_item',
          amount: 3300,
          currency: 'jpy',
          description: 'Matcha tin',
          discount_amounts: [],
          quantity: 3,
          price: { id: 'price_demo_tea', product: 'prod_demo_tea', tax_behavior: 'inclusive', unit_amount: 1100, unit_amount_decimal: '1100' },
          tax_amounts: [jct(300, 3000)],
        },
        {
          id: 'il_demo_whisk',
          object: 'line_item',
          amount: 2200,
          currency: 'jpy',
          description: 'Bamboo whisk',
          discount_amounts: [],
          quantity: 1,
          price: { id: 'price_demo_whisk', product: 'prod_demo_whisk', tax_behavior: 'inclusive', unit_amount: 2200, unit_amount_decimal: '2200' },
          tax_amounts: [jct(200, 2000)],
        },
      ],
    },
    subtotal: 5500,
    subtotal_excluding_tax: 5000,
    tax: 500,
    total_tax_amounts: [jct(300, 3000), jct(200, 2000)],
    total: 5500,
    total_excluding_tax: 5000,
  };
  const creditNote = {
    id: creditNoteId,
    object: 'credit_note',
    number: `JP-${run}-CN-01`,
    status: 'issued',
    type: 'post_payment',
    currency: 'jpy',
    created: unix(before(now, 1)),
    customer: customerId,
    invoice: invoiceId,
    reason: 'product_unsatisfactory',
    memo: 'one tin arrived dented',
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: 'cnli_demo_tea',
          object: 'credit_note_line_item',
          type: 'invoice_line_item',
          invoice_line_item: 'il_demo_tea',
          amount: 1100,
          description: 'Matcha tin',
          quantity: 1,
          unit_amount: 1100,
          unit_amount_decimal: '1100',
          discount_amount: 0,
          discount_amounts: [],
          tax_amounts: [jct(100, 1000)],
        },
      ],
    },
    shipping_cost: null,
    subtotal: 1100,
    subtotal_excluding_tax: 1000,
    discount_amount: 0,
    tax_amounts: [jct(100, 1000)],
    amount: 1100,
    total: 1100,
    total_excluding_tax: 1000,
  };
  const event = (suffix: string, type: string, object: unknown) => ({
    id: `evt_demo${run}${suffix}`,
    object: 'event',
    api_version: '2024-06-20',
    created: unix(now),
    type,
    data: { object },
  });
  return {
    deliveries: [
      { connector: 'stripe', topic: 'invoice.finalized', headers: {}, body: event('inv', 'invoice.finalized', invoice) },
      { connector: 'stripe', topic: 'credit_note.created', headers: {}, body: event('cn', 'credit_note.created', creditNote) },
    ],
    expected: [
      { connector: 'stripe', record: 'invoice', external_id: invoiceId },
      { connector: 'stripe', record: 'refund', external_id: `refund-${creditNoteId}`, invoice_external_id: invoiceId },
    ],
  };
}

// ——— WooCommerce: a tax-inclusive EUR order of a consumer in Munich, on hold, then paid ———
// The zero-configuration seller is registered for VAT in Germany (src/vat-ops/zero-config.ts):
// this order is its German VAT sale. Paying it changes the status only, not the VAT.

function wooSamples(run: string, now: Date): Part & { updates: DemoUpdate[] } {
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
  const delivery = (topic: 'order.created' | 'order.updated', body: unknown): DemoDelivery => ({
    connector: 'woocommerce',
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
    expected: [{ connector: 'woocommerce', record: 'invoice', external_id: String(orderId) }],
    updates: [
      {
        delivery: delivery('order.updated', paid),
        connector: 'woocommerce',
        record: 'invoice',
        external_id: String(orderId),
        change: 'status on-hold → processing (paid)',
      },
    ],
  };
}

// ——— ERP: one batch of canonical events — a customer in Texas, its USD invoice, a California resale exemption ———

function erpSamples(run: string, now: Date): Part {
  const customerId = `C-DEMO-${run}`;
  const invoiceId = `INV-DEMO-${run}`;
  const exemptionId = `EX-DEMO-${run}`;
  const certificateId = uuidFrom(run, 'erp-certificate');
  const year = now.getUTCFullYear();
  // `record.source` and `connector` are left out: the daemon fills in the ERP connector's
  // configured source, so the batch works whatever TAXSYNC_CONFIG says.
  const batch = [
    {
      id: `erp-demo-${run}-customer`,
      type: 'customer.upserted',
      occurred_at: iso(before(now, 3)),
      record: { kind: 'customer', external_id: customerId },
      data: {
        name: 'Contoso Wholesale LLC',
        email: `ap.${run}@contoso.example`,
        customer_type: 'wholesale',
        addresses: { billing: { street: '100 Congress Ave', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
      },
    },
    {
      id: `erp-demo-${run}-invoice`,
      type: 'invoice.upserted',
      occurred_at: iso(before(now, 2)),
      record: { kind: 'transaction', external_id: invoiceId },
      data: {
        number: invoiceId,
        issued_at: iso(before(now, 2)),
        status: 'active',
        currency: 'USD',
        tax_inclusive: false,
        customer: { external_id: customerId, name: 'Contoso Wholesale LLC' },
        addresses: { shipping: { street: '100 Congress Ave', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
        lines: [
          { id: '1', sku: 'WID-1', name: 'Widget', unit_price: '10.50', quantity: '3', discount: '1.50' },
          { id: '2', sku: 'SVC-9', name: 'Installation', unit_price: '120.00', quantity: '1' },
        ],
        shipping: { amount: '4.90' },
        subtotal: '150.00',
        total: '154.90',
      },
    },
    {
      id: `erp-demo-${run}-exemption`,
      type: 'exemption.upserted',
      occurred_at: iso(before(now, 1)),
      record: { kind: 'exemption', external_id: exemptionId },
      data: {
        customer_external_id: customerId,
        country: 'US',
        // A California resale certificate: it does not touch the Texas invoice above.
        jurisdictions: ['CA'],
        start_date: `${year}-01-01`,
        certificate_id: certificateId,
        exemption_type: 'full',
      },
    },
  ];
  return {
    deliveries: [{ connector: 'erp', topic: 'batch', headers: {}, body: batch }],
    expected: [
      { connector: 'erp', record: 'customer', external_id: customerId },
      { connector: 'erp', record: 'invoice', external_id: invoiceId },
      { connector: 'erp', record: 'exemption', external_id: exemptionId, customer_external_id: customerId, certificate_id: certificateId },
    ],
  };
}
