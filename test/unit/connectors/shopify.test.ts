import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { shopifyConnector } from '../../../src/connectors/shopify/index.js';
import type { ConnectorSettings, ParseResult, WebhookRequest } from '../../../src/connectors/types.js';
import { Money } from '../../../src/domain/money.js';

const SECRET = 'shpss_test_4f7a1c9e2b6d8f0a';
const RECEIVED = new Date('2026-11-20T10:00:05Z');

function settings(overrides: Partial<ConnectorSettings> = {}): ConnectorSettings {
  return { source: 'shopify', secrets: [new Secret(SECRET)], toleranceSeconds: 300, ...overrides };
}

function request(topic: string, body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const rawBody = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    headers: { 'x-shopify-topic': topic, 'x-shopify-webhook-id': 'wh-1', ...shopifyConnector.sign(rawBody, SECRET, RECEIVED), ...headers },
    rawBody,
    contentType: 'application/json',
    receivedAt: RECEIVED,
  };
}

function parse(topic: string, body: unknown, headers: Record<string, string> = {}): ParseResult {
  return shopifyConnector.parse(request(topic, body, headers), settings());
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

const money = (amount: string) => ({ shop_money: { amount, currency_code: 'USD' }, presentment_money: { amount, currency_code: 'USD' } });

/** An order with an order-level code spread over both lines (allocation_method across, target_selection all). */
function order(overrides: Record<string, unknown> = {}) {
  return {
    id: 5001,
    name: '#5001',
    created_at: '2026-11-20T05:00:00-05:00',
    updated_at: '2026-11-20T05:00:03-05:00',
    cancelled_at: null,
    financial_status: 'paid',
    currency: 'USD',
    taxes_included: false,
    total_discounts: '12.00',
    subtotal_price: '78.00',
    total_tax: '0.00',
    total_price: '83.00',
    discount_applications: [
      { target_type: 'line_item', value_type: 'fixed_amount', value: '10.0', allocation_method: 'across', target_selection: 'all', code: 'TEN' },
      { target_type: 'shipping_line', value_type: 'fixed_amount', value: '2.0', allocation_method: 'each', target_selection: 'all', code: 'SHIP2' },
    ],
    line_items: [
      { id: 1, price: '60.00', quantity: 1, discount_allocations: [{ amount: '7.50', discount_application_index: 0 }], tax_lines: [] },
      { id: 2, price: '10.00', quantity: 3, discount_allocations: [{ amount: '2.50', discount_application_index: 0 }], tax_lines: [] },
    ],
    shipping_lines: [{ price: '7.00', discount_allocations: [{ amount: '2.00', discount_application_index: 1 }], tax_lines: [] }],
    ...overrides,
  };
}

function refund(overrides: Record<string, unknown> = {}) {
  return {
    id: 7001,
    order_id: 5001,
    created_at: '2026-11-21T09:00:00-05:00',
    note: '',
    refund_line_items: [
      {
        line_item_id: 1,
        quantity: 1,
        subtotal: 52.5,
        total_tax: 3.15,
        subtotal_set: money('52.50'),
        total_tax_set: money('3.15'),
        line_item: { id: 1, price: '60.00', sku: 'A', tax_lines: [{ price: '3.15', rate: 0.06, title: 'State' }] },
      },
    ],
    order_adjustments: [],
    refund_shipping_lines: [],
    transactions: [{ kind: 'refund', amount: '60.65', currency: 'USD' }],
    ...overrides,
  };
}

describe('Shopify orders', () => {
  it('puts every discount on its line once and sends no separate order discount', () => {
    const [event] = wire(parse('orders/create', order()));
    const data = event!.data;
    expect(data.discount).toBeUndefined();
    expect(data.lines.map((l) => l.discount)).toEqual(['7.5', '2.5']);
    expect(data.shipping).toEqual({ amount: '7', discount: '2' });
    // Line discounts + shipping discount = the order's total_discounts: nothing counted twice.
    const counted = new Money(data.lines[0]!.discount!).plus(data.lines[1]!.discount!).plus(data.shipping.discount!);
    expect(counted.equals('12')).toBe(true);
  });

  it('sums the tax lines of a line and gives a rate only when a single tax applies', () => {
    const body = order({
      line_items: [
        { id: 1, price: '10.00', quantity: 1, tax_lines: [{ price: '0.60', rate: 0.06 }, { price: '0.10', rate: 0.01 }] },
        { id: 2, price: '10.00', quantity: 1, tax_lines: [{ price: '0.73', rate: 0.0725 }] },
      ],
    });
    const lines = wire(parse('orders/create', body))[0]!.data.lines;
    expect(lines[0]).toMatchObject({ tax_amount: '0.7' });
    expect(lines[0]!.tax_rate).toBeUndefined();
    expect(lines[1]).toMatchObject({ tax_amount: '0.73', tax_rate: '0.0725' });
  });

  it.each([
    [{ financial_status: 'paid' }, 'paid'],
    [{ financial_status: 'partially_refunded' }, 'paid'],
    [{ financial_status: 'refunded' }, 'paid'],
    [{ financial_status: 'pending' }, 'active'],
    [{ financial_status: 'authorized' }, 'active'],
    [{ financial_status: 'paid', cancelled_at: '2026-11-20T06:00:00-05:00' }, 'cancelled'],
  ])('maps %o to status %s', (overrides, status) => {
    expect(wire(parse('orders/updated', order(overrides)))[0]!.data.status).toBe(status);
  });

  it('turns orders/cancelled into invoice.cancelled with status cancelled', () => {
    const [event] = wire(parse('orders/cancelled', order({ cancelled_at: '2026-11-20T06:00:00-05:00' })));
    expect(event!.type).toBe('invoice.cancelled');
    expect(event!.data.status).toBe('cancelled');
  });

  it('gives the same change the same event id whichever topic delivers it and whatever offset it is written in', () => {
    const ids = [
      wire(parse('orders/updated', order()))[0]!.id,
      wire(parse('orders/paid', order()))[0]!.id,
      wire(parse('orders/create', order({ updated_at: '2026-11-20T10:00:03Z' })))[0]!.id,
    ];
    expect(new Set(ids)).toEqual(new Set(['shopify:orders:5001:2026-11-20T10:00:03Z:paid']));
    expect(wire(parse('orders/updated', order({ updated_at: '2026-11-20T05:00:04-05:00' })))[0]!.id).not.toBe(ids[0]);
  });

  it('takes the delivery id from X-Shopify-Event-Id, else X-Shopify-Webhook-Id, and reads X-Shopify-Triggered-At', () => {
    const withEvent = parse('orders/paid', order(), { 'x-shopify-event-id': 'evt-9', 'x-shopify-triggered-at': '2026-11-20T10:00:04.250Z' });
    expect(withEvent).toMatchObject({ kind: 'events', deliveryId: 'evt-9', triggeredAt: new Date('2026-11-20T10:00:04.250Z') });
    expect(parse('orders/paid', order())).toMatchObject({ kind: 'events', deliveryId: 'wh-1' });
  });

  it('accepts an integer JSON number as an amount and rejects a fractional one, naming the field', () => {
    const integer = order({ line_items: [{ id: 1, price: 25, quantity: 2, tax_lines: [] }] });
    expect(wire(parse('orders/create', integer))[0]!.data.lines[0]).toMatchObject({ unit_price: '25', quantity: '2' });

    const fractional = parse('orders/create', order({ line_items: [{ id: 1, price: 19.99, quantity: 1 }] }));
    expect(fractional.kind).toBe('invalid');
    expect(fractional.kind === 'invalid' && fractional.fields).toHaveProperty(['line_items[0].price']);
  });

  it('rejects an id that JSON numbers cannot hold exactly', () => {
    const result = parse('orders/create', '{"id": 820982911946154508, "updated_at": "2026-11-20T10:00:00Z"}');
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && Object.keys(result.fields ?? {})).toContain('id');
  });

  it('names the topic and the delivery of an invalid payload', () => {
    const result = parse('orders/create', { id: 1 });
    expect(result).toMatchObject({ kind: 'invalid', topic: 'orders/create', deliveryId: 'wh-1' });
    expect(result.kind === 'invalid' && Object.keys(result.fields ?? {})).toEqual(expect.arrayContaining(['updated_at', 'currency', 'line_items']));
  });

  it('ignores topics it does not read without looking at the body', () => {
    expect(parse('app/uninstalled', 'not json at all')).toEqual({
      kind: 'ignored',
      topic: 'app/uninstalled',
      deliveryId: 'wh-1',
      reason: 'topic app/uninstalled is not one taxsync reads',
    });
  });
});

describe('Shopify refunds', () => {
  it('adds a shipping refund from refund_shipping_lines once, though order_adjustments report it too', () => {
    const body = refund({
      refund_shipping_lines: [{ id: 1, shipping_line_id: 9, subtotal_amount_set: money('5.00') }],
      order_adjustments: [{ kind: 'shipping_refund', amount: '-5.00', tax_amount: '-0.30', amount_set: money('-5.00') }],
    });
    const data = wire(parse('refunds/create', body))[0]!.data;
    expect(data).toMatchObject({ amount: '57.5', shipping_amount: '5', tax_amount: '3.45' });
  });

  it('reads the shipping refund from order_adjustments (absolute value) when there are no refund_shipping_lines', () => {
    const body = refund({
      order_adjustments: [
        { kind: 'shipping_refund', amount: '-8.00', tax_amount: '-0.48' },
        { kind: 'refund_discrepancy', amount: '-1.00', tax_amount: '0.00' },
      ],
    });
    const data = wire(parse('refunds/create', body))[0]!.data;
    expect(data).toMatchObject({ amount: '60.5', shipping_amount: '8', tax_amount: '3.63' });
  });

  it('prefers the tax of refund_shipping_lines when they state it', () => {
    const body = refund({
      refund_line_items: [],
      refund_shipping_lines: [{ subtotal_amount_set: money('5.00'), total_tax_set: money('0.40') }],
      order_adjustments: [{ kind: 'shipping_refund', amount: '-5.00', tax_amount: '-0.30' }],
    });
    const data = wire(parse('refunds/create', body))[0]!.data;
    expect(data).toMatchObject({ amount: '5', shipping_amount: '5', tax_amount: '0.4' });
    expect(data.lines).toBeUndefined();
  });

  it('links the refund to its order under a refund- external id, with the discount share on the line', () => {
    const [event] = wire(parse('refunds/create', refund({ note: 'damaged' })));
    expect(event).toMatchObject({
      id: 'shopify:refunds:7001:2026-11-21T14:00:00Z',
      type: 'refund.created',
      record: { kind: 'transaction', source: 'shopify', external_id: 'refund-7001' },
      data: { invoice_external_id: '5001', currency: 'USD', amount: '52.5', tax_amount: '3.15', reason: 'damaged' },
    });
    expect(event!.data.shipping_amount).toBeUndefined();
    expect(event!.data.lines).toEqual([{ id: '1', sku: 'A', unit_price: '60', quantity: '1', discount: '7.5', tax_amount: '3.15', tax_rate: '0.06' }]);
  });

  it('reads the JSON-number subtotal only when it is an integer and no subtotal_set is sent', () => {
    const line = { line_item_id: 1, quantity: 2, subtotal: 40, total_tax: 0, line_item: null };
    const data = wire(parse('refunds/create', refund({ refund_line_items: [line] })))[0]!.data;
    expect(data.amount).toBe('40');
    expect(data.lines).toEqual([{ id: '1', unit_price: '20', quantity: '2', tax_amount: '0' }]);

    const fractional = parse('refunds/create', refund({ refund_line_items: [{ ...line, subtotal: 39.99 }] }));
    expect(fractional.kind === 'invalid' && fractional.fields).toHaveProperty(['refund_line_items[0].subtotal']);
  });

  it('ignores a refund that gives back neither items nor shipping', () => {
    const body = refund({ refund_line_items: [], order_adjustments: [{ kind: 'refund_discrepancy', amount: '-3.00', tax_amount: '0.00' }] });
    expect(parse('refunds/create', body)).toMatchObject({ kind: 'ignored', topic: 'refunds/create' });
  });

  it('is invalid when no currency can be found', () => {
    const body = refund({ refund_line_items: [{ line_item_id: 1, quantity: 1, subtotal: 5, total_tax: 0 }], transactions: [] });
    const result = parse('refunds/create', body);
    expect(result.kind === 'invalid' && Object.keys(result.fields ?? {})).toEqual(['transactions']);
  });
});

describe('Shopify customers', () => {
  const customer = {
    id: 42,
    email: 'x@example.com',
    first_name: 'Xu',
    last_name: 'Li',
    state: 'enabled',
    tax_exempt: false,
    tax_exemptions: [] as string[],
    created_at: '2026-11-01T00:00:00Z',
    updated_at: '2026-11-02T00:00:00Z',
    default_address: null,
  };

  it.each([
    [false, [], false],
    [true, [], true],
    [false, ['CA_STATUS_CARD_EXEMPTION'], true],
  ])('tax_exempt %s with exemptions %o → %s', (flag, exemptions, expected) => {
    const data = wire(parse('customers/update', { ...customer, tax_exempt: flag, tax_exemptions: exemptions }))[0]!.data;
    expect(data.tax_exempt).toBe(expected);
  });

  it('keys the customer by id and its change time', () => {
    const [event] = wire(parse('customers/create', customer));
    expect(event).toMatchObject({ id: 'shopify:customers:42:2026-11-02T00:00:00Z', record: { kind: 'customer', external_id: '42' } });
    expect(event!.data).toEqual({
      name: 'Xu Li',
      email: 'x@example.com',
      tax_exempt: false,
      status: 'enabled',
      created_at: '2026-11-01T00:00:00Z',
      updated_at: '2026-11-02T00:00:00Z',
    });
  });
});

describe('Shopify signatures', () => {
  const body = Buffer.from('{"id":1}');
  const digest = (secret: string) => createHmac('sha256', secret).update(body).digest('base64');
  const req = (signature: string | undefined): WebhookRequest => ({
    headers: signature === undefined ? {} : { 'x-shopify-hmac-sha256': signature },
    rawBody: body,
    contentType: 'application/json',
    receivedAt: RECEIVED,
  });

  it('accepts the base64 HMAC-SHA256 of the raw body computed independently', () => {
    expect(shopifyConnector.verify(req(digest(SECRET)), settings())).toEqual({ ok: true });
    expect(shopifyConnector.sign(body, SECRET, RECEIVED)).toEqual({ 'x-shopify-hmac-sha256': digest(SECRET) });
  });

  it('accepts any secret during a rotation and refuses when none matches or none is configured', () => {
    const rotation = settings({ secrets: [new Secret('old'), new Secret('new')] });
    expect(shopifyConnector.verify(req(digest('new')), rotation)).toEqual({ ok: true });
    expect(shopifyConnector.verify(req(digest('other')), rotation).ok).toBe(false);
    expect(shopifyConnector.verify(req(digest(SECRET)), settings({ secrets: [] })).ok).toBe(false);
  });

  it('refuses a missing or non-base64 signature', () => {
    expect(shopifyConnector.verify(req(undefined), settings())).toEqual({ ok: false, reason: 'missing X-Shopify-Hmac-Sha256 header' });
    expect(shopifyConnector.verify(req('not base64!'), settings()).ok).toBe(false);
  });
});
