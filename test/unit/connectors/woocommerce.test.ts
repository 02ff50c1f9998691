import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { woocommerceConnector } from '../../../src/connectors/woocommerce/index.js';
import type { ConnectorSettings, ParseResult, WebhookRequest } from '../../../src/connectors/types.js';

const SECRET = 'wc-webhook-secret-3b9f';
const RECEIVED = new Date('2026-11-20T10:06:00Z');

function settings(overrides: Partial<ConnectorSettings> = {}): ConnectorSettings {
  return { source: 'woocommerce', secrets: [new Secret(SECRET)], toleranceSeconds: 300, ...overrides };
}

function request(topic: string | undefined, body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const rawBody = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    headers: {
      ...(topic && { 'x-wc-webhook-topic': topic }),
      'x-wc-webhook-delivery-id': 'd-1',
      ...woocommerceConnector.sign(rawBody, SECRET, RECEIVED),
      ...headers,
    },
    rawBody,
    contentType: 'application/json',
    receivedAt: RECEIVED,
  };
}

function parse(topic: string | undefined, body: unknown): ParseResult {
  return woocommerceConnector.parse(request(topic, body), settings());
}

/** The wire form of an event, as much of it as these tests read. */
interface WireData {
  [key: string]: unknown;
  status?: string;
  discount?: string;
  amount?: string;
  reason?: string;
  shipping_amount?: string;
  tax_exempt?: boolean;
  tax_inclusive?: boolean;
  lines: Record<string, string | undefined>[];
  shipping: Record<string, string>;
  customer: { external_id: string } & Record<string, unknown>;
  addresses: Record<string, unknown>;
}
type WireEvent = { id: string; type: string; occurred_at: string; record: { external_id: string }; data: WireData };

function wire(result: ParseResult): WireEvent[] {
  if (result.kind !== 'events') throw new Error(`expected events, got ${result.kind}: ${'message' in result ? result.message : ''}`);
  return JSON.parse(JSON.stringify(result.events)) as WireEvent[];
}

const address = { first_name: 'Bo', last_name: 'Berg', address_1: '1 Main St', address_2: '', city: 'Austin', state: 'TX', postcode: '78701', country: 'US' };

/** A taxed order of 110.00 (100.00 + 10% tax) by registered customer 5. */
function order(overrides: Record<string, unknown> = {}) {
  return {
    id: 900,
    number: '900',
    status: 'processing',
    currency: 'USD',
    prices_include_tax: false,
    date_created_gmt: '2026-11-20T10:00:00',
    date_modified_gmt: '2026-11-20T10:05:00',
    date_paid_gmt: '2026-11-20T10:00:05',
    customer_id: 5,
    billing: { ...address, email: 'Bo.Berg@Example.com' },
    shipping: address,
    total: '110.00',
    total_tax: '10.00',
    line_items: [
      {
        id: 1,
        name: 'Widget',
        product_id: 10,
        sku: 'W-1',
        quantity: 2,
        subtotal: '100.00',
        subtotal_tax: '10.00',
        total: '100.00',
        total_tax: '10.00',
        taxes: [{ id: 1, total: '10', subtotal: '10' }],
        price: 50,
      },
    ],
    shipping_lines: [],
    fee_lines: [],
    tax_lines: [{ id: 7, rate_id: 1, rate_code: 'US-TX-1', rate_percent: 10 }],
    refunds: [],
    ...overrides,
  };
}

const line = (overrides: Record<string, unknown>) => ({ ...order().line_items[0], ...overrides });

describe('WooCommerce customers of orders', () => {
  it('keys a registered customer by customer_id', () => {
    const customer = wire(parse('order.created', order()))[0]!.data.customer;
    expect(customer).toMatchObject({ external_id: '5', name: 'Bo Berg', email: 'Bo.Berg@Example.com' });
  });

  it('keys a guest (customer_id 0) by the order, never by the email (record keys reach logs and Redis keys)', () => {
    const body = order({ customer_id: 0 });
    const customer = wire(parse('order.created', body))[0]!.data.customer;
    expect(customer.external_id).toBe(`guest-order-${String((body as { id: unknown }).id)}`);
    expect(customer.external_id).not.toContain('@');
    expect(customer.email).toBe('Bo.Berg@Example.com');
  });

  it('sends no customer for a guest with neither name nor email, keeping the addresses on the invoice', () => {
    const data = wire(parse('order.created', order({ customer_id: 0, billing: { ...address, email: '', first_name: '', last_name: '' } })))[0]!.data;
    expect(data.customer).toBeUndefined();
    expect(data.addresses.billing).toEqual({ street: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', country: 'US' });
  });
});

describe('WooCommerce refunds inside orders', () => {
  it('emits one refund.created per refund, linked to the order, under refund-<order>-<refund>', () => {
    const body = order({
      refunds: [
        { id: 901, reason: 'broken', total: '-55.00' },
        { id: 902, reason: '', total: '-33.33' },
      ],
    });
    const [invoice, first, second] = wire(parse('order.updated', body));
    expect(invoice!.type).toBe('invoice.upserted');
    expect(first).toMatchObject({
      id: 'woocommerce:refunds:900-901:2026-11-20T10:05:00Z',
      type: 'refund.created',
      record: { kind: 'transaction', source: 'woocommerce', external_id: 'refund-900-901' },
      data: { invoice_external_id: '900', currency: 'USD', amount: '50', tax_amount: '5', reason: 'broken' },
    });
    // 33.33 × 100.00 / 110.00 = 30.30 exactly; the rest is tax.
    expect(second).toMatchObject({ record: { external_id: 'refund-900-902' }, data: { amount: '30.3', tax_amount: '3.03' } });
    expect(second!.data.reason).toBeUndefined();
  });

  it.each([
    ['a full refund', { total: '110.00', total_tax: '10.00' }, '-110.00', 'USD', '100', '10'],
    ['an untaxed order', { total: '80.00', total_tax: '0.00', line_items: [line({ subtotal: '80.00', subtotal_tax: '0.00', total: '80.00', total_tax: '0.00' })] }, '-20.00', 'USD', '20', '0'],
    ['a zero-total order', { total: '0.00', total_tax: '0.00' }, '-5.00', 'USD', '5', '0'],
    ['a rounded split', { total: '107.00', total_tax: '7.00' }, '-10.00', 'USD', '9.35', '0.65'],
    ['JPY (no decimals)', { total: '1100', total_tax: '100', line_items: [line({ subtotal: '1000', subtotal_tax: '100', total: '1000', total_tax: '100' })] }, '-333', 'JPY', '303', '30'],
  ])('splits %s by the order tax proportion', (_name, totals, refundTotal, currency, amount, tax) => {
    const body = order({ ...totals, currency, refunds: [{ id: 1, reason: '', total: refundTotal }] });
    const refund = wire(parse('order.updated', body))[1]!;
    expect(refund.data).toMatchObject({ amount, tax_amount: tax, currency });
  });

  it('gives each refund its share of the running total, so refunds of the whole order add up to exactly its net', () => {
    // Order 107.00, tax 7.00: net share r = 100 ÷ 107. Refunds made in id order: 1.08, 1.14, then the rest 104.78.
    // Running totals: 1.08 → 1.0093… → 1.01; 2.22 → 2.0747… → 2.07; 107.00 → 100.00.
    // Nets: 1.01, 2.07 − 1.01 = 1.06, 100.00 − 2.07 = 97.93 (together 100.00). Each rounded alone:
    // 1.01 + 1.07 (1.0654…) + 97.93 (97.9252…) = 100.01, more than the order's net.
    const body = order({
      total: '107.00',
      total_tax: '7.00',
      refunds: [
        { id: 3, reason: '', total: '-104.78' },
        { id: 2, reason: '', total: '-1.14' },
        { id: 1, reason: '', total: '-1.08' },
      ],
    });
    const refunds = wire(parse('order.updated', body)).slice(1);
    expect(refunds.map((r) => [r.record.external_id, r.data.amount, r.data.tax_amount])).toEqual([
      ['refund-900-3', '97.93', '6.85'], // 104.78 − 97.93
      ['refund-900-2', '1.06', '0.08'], // 1.14 − 1.06
      ['refund-900-1', '1.01', '0.07'], // 1.08 − 1.01
    ]);
  });

  it('sends no refund for a refund of 0.00 (a restock only): it takes no share of the invoice', () => {
    const body = order({ refunds: [{ id: 2, reason: 'restock', total: '0.00' }, { id: 1, reason: '', total: '-11.00' }] });
    const events = wire(parse('order.updated', body));
    expect(events.map((e) => e.record.external_id)).toEqual(['900', 'refund-900-1']);
  });

  it('keeps a fully refunded order paid: its refunds reverse it', () => {
    const body = order({ status: 'refunded', refunds: [{ id: 1, reason: '', total: '-110.00' }] });
    expect(wire(parse('order.updated', body))[0]!.data.status).toBe('paid');
  });
});

describe('WooCommerce lines', () => {
  it('prices a line from its exact subtotal, takes subtotal − total as its discount and ignores the float price', () => {
    const body = order({ line_items: [line({ quantity: 3, subtotal: '30.00', total: '27.00', total_tax: '2.70', price: 9.000000000000002 })] });
    expect(wire(parse('order.created', body))[0]!.data.lines).toEqual([
      { id: '1', product_id: '10', sku: 'W-1', name: 'Widget', unit_price: '10', quantity: '3', discount: '3', tax_amount: '2.7', tax_rate: '0.1' },
    ]);
  });

  it('uses gross amounts in a tax-inclusive order', () => {
    const body = order({
      prices_include_tax: true,
      line_items: [line({ quantity: 3, subtotal: '25.00', subtotal_tax: '5.00', total: '22.50', total_tax: '4.50' })],
      shipping_lines: [{ id: 3, total: '4.12', total_tax: '0.78' }],
    });
    const data = wire(parse('order.created', body))[0]!.data;
    expect(data.tax_inclusive).toBe(true);
    // (25.00 + 5.00) / 3 = 10.00 gross per unit; discount (25 + 5) − (22.50 + 4.50) = 3.00.
    expect(data.lines[0]).toMatchObject({ unit_price: '10', quantity: '3', discount: '3', tax_amount: '4.5' });
    expect(data.shipping).toEqual({ amount: '4.9', tax_amount: '0.78' });
  });

  it('turns a line whose subtotal does not divide by its quantity into one unit of the whole subtotal', () => {
    const body = order({ line_items: [line({ quantity: 3, subtotal: '10.00', total: '10.00', total_tax: '1.00' })] });
    expect(wire(parse('order.created', body))[0]!.data.lines[0]).toMatchObject({ unit_price: '10', quantity: '1' });
  });

  it('sends fees, negative ones too, as lines of one unit', () => {
    const body = order({
      fee_lines: [
        { id: 8, name: 'Handling', total: '2.50', total_tax: '0.25', taxes: [{ id: 1, total: '0.25' }] },
        { id: 9, name: 'Loyalty credit', total: '-5.00', total_tax: '0.00', taxes: [] },
      ],
    });
    const lines = wire(parse('order.created', body))[0]!.data.lines;
    expect(lines.slice(1)).toEqual([
      { id: '8', name: 'Handling', unit_price: '2.5', quantity: '1', tax_amount: '0.25', tax_rate: '0.1' },
      { id: '9', name: 'Loyalty credit', unit_price: '-5', quantity: '1', tax_amount: '0' },
    ]);
  });

  it('gives no rate when two rates apply to a line', () => {
    const body = order({
      line_items: [line({ taxes: [{ id: 1, total: '8' }, { id: 2, total: '2' }] })],
      tax_lines: [
        { rate_id: 1, rate_percent: 8 },
        { rate_id: 2, rate_percent: 2 },
      ],
    });
    expect(wire(parse('order.created', body))[0]!.data.lines[0]!.tax_rate).toBeUndefined();
  });

  it('accepts an integer JSON number as an amount and rejects a fractional one, naming the field', () => {
    const integer = order({ line_items: [line({ subtotal: 100, total: 100 })] });
    expect(wire(parse('order.created', integer))[0]!.data.lines[0]).toMatchObject({ unit_price: '50', quantity: '2' });

    const fractional = parse('order.created', order({ line_items: [line({ total_tax: 9.99 })] }));
    expect(fractional.kind === 'invalid' && fractional.fields).toHaveProperty(['line_items[0].total_tax']);
  });
});

describe('WooCommerce order status', () => {
  it.each([
    [{ status: 'processing' }, 'paid'],
    [{ status: 'completed' }, 'paid'],
    [{ status: 'on-hold', date_paid_gmt: null }, 'active'],
    [{ status: 'pending', date_paid_gmt: null }, 'active'],
    [{ status: 'on-hold', date_paid_gmt: '2026-11-20T10:01:00' }, 'paid'],
    [{ status: 'cancelled' }, 'cancelled'],
    [{ status: 'failed', date_paid_gmt: null }, 'cancelled'],
  ])('maps %o to %s', (overrides, status) => {
    expect(wire(parse('order.updated', order(overrides)))[0]!.data.status).toBe(status);
  });

  it.each(['checkout-draft', 'trash'])('ignores an order in status %s', (status) => {
    expect(parse('order.updated', order({ status }))).toMatchObject({ kind: 'ignored', deliveryId: `order:900:2026-11-20T10:05:00Z:${status}` });
  });
});

describe('WooCommerce delivery and event ids', () => {
  it('gives the same state the same delivery and event ids whichever topic carries it', () => {
    const created = parse('order.created', order());
    const updated = parse('order.updated', order());
    expect(created).toMatchObject({ deliveryId: 'order:900:2026-11-20T10:05:00Z:processing' });
    expect(updated).toMatchObject({ deliveryId: 'order:900:2026-11-20T10:05:00Z:processing' });
    expect(wire(created)[0]!.id).toBe(wire(updated)[0]!.id);
    expect(wire(parse('order.updated', order({ date_modified_gmt: '2026-11-20T10:05:01' })))[0]!.id).toBe(
      'woocommerce:orders:900:2026-11-20T10:05:01Z:processing',
    );
  });

  it('keeps orders and customers with the same id and time apart', () => {
    const customer = { id: 900, email: 'c@example.com', date_created_gmt: '2026-11-20T10:05:00', date_modified_gmt: '2026-11-20T10:05:00' };
    expect(parse('customer.updated', customer)).toMatchObject({ deliveryId: 'customer:900:2026-11-20T10:05:00Z' });
  });

  it('ignores an unknown topic under its delivery header and calls a missing topic invalid', () => {
    expect(parse('coupon.created', 'x')).toMatchObject({ kind: 'ignored', topic: 'coupon.created', deliveryId: 'd-1' });
    expect(parse(undefined, order())).toMatchObject({ kind: 'invalid' });
  });
});

describe('WooCommerce signatures and ping', () => {
  const body = Buffer.from('{"id":1}');
  const digest = (secret: string) => createHmac('sha256', secret).update(body).digest('base64');
  const req = (headers: Record<string, string>, rawBody = body, contentType = 'application/json'): WebhookRequest => ({
    headers,
    rawBody,
    contentType,
    receivedAt: RECEIVED,
  });

  it('accepts the base64 HMAC-SHA256 of the raw body computed independently, under any rotated secret', () => {
    const rotation = settings({ secrets: [new Secret('old'), new Secret(SECRET)] });
    expect(woocommerceConnector.verify(req({ 'x-wc-webhook-signature': digest(SECRET) }), rotation)).toEqual({ ok: true });
    expect(woocommerceConnector.verify(req({ 'x-wc-webhook-signature': digest('other') }), rotation).ok).toBe(false);
    expect(woocommerceConnector.verify(req({}), rotation)).toEqual({ ok: false, reason: 'missing X-WC-Webhook-Signature header' });
  });

  it('recognises the unsigned creation ping and nothing else', () => {
    const form = 'application/x-www-form-urlencoded';
    expect(woocommerceConnector.isPing(req({}, Buffer.from('webhook_id=15'), form))).toBe(true);
    expect(woocommerceConnector.isPing(req({}, Buffer.from('webhook_id=15'), 'application/json'))).toBe(false);
    expect(woocommerceConnector.isPing(req({}, Buffer.from('webhook_id=15&x=1'), form))).toBe(false);
    expect(woocommerceConnector.contentTypes).toEqual(expect.arrayContaining(['application/json', form]));
  });
});

describe('ids that are not well-formed Unicode', () => {
  it('refuses an order whose id has a lone surrogate as invalid, naming the field', () => {
    const result = parse('order.updated', order({ id: '44\ud80000' }));
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && Object.keys(result.fields ?? {})).toContain('id');
  });
});
