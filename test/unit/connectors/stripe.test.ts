import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import {
  STRIPE_THREE_DECIMAL,
  STRIPE_TWO_DECIMAL_SPECIAL_CASES,
  STRIPE_ZERO_DECIMAL,
  fromStripeAmount,
  fromStripeDecimal,
  stripeExponent,
} from '../../../src/connectors/stripe/currencies.js';
import { stripeConnector } from '../../../src/connectors/stripe/index.js';
import { unitAndQuantity } from '../../../src/connectors/stripe/values.js';
import type { ConnectorSettings, ParseResult, WebhookRequest } from '../../../src/connectors/types.js';

const SECRET = 'whsec_test_8mN2pQ4rS6tU8vW0xY2z';
const RECEIVED = new Date('2026-11-20T10:00:05Z');
const NOW_S = 1795168805;

function settings(overrides: Partial<ConnectorSettings> = {}): ConnectorSettings {
  return { source: 'stripe', secrets: [new Secret(SECRET)], toleranceSeconds: 300, ...overrides };
}

function request(body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const rawBody = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return { headers: { ...stripeConnector.sign(rawBody, SECRET, RECEIVED), ...headers }, rawBody, contentType: 'application/json', receivedAt: RECEIVED };
}

function parse(body: unknown, s = settings()): ParseResult {
  return stripeConnector.parse(request(body), s);
}

function wire(result: ParseResult): unknown[] {
  if (result.kind !== 'events') throw new Error(`expected events, got ${result.kind}: ${'message' in result ? result.message : ''}`);
  return JSON.parse(JSON.stringify(result.events)) as unknown[];
}

/** A hex v1 computed here, independently of the connector: HMAC-SHA256 of `${t}.${body}` keyed with the secret string. */
function v1(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

describe('Stripe currency exponents', () => {
  it.each([
    ['JPY', 1234, '1234'],
    ['jpy', 1234, '1234'],
    ['KRW', 50000, '50000'],
    ['CLP', 990, '990'],
    ['KWD', 1234, '1.234'],
    ['BHD', 1230, '1.23'],
    ['USD', 1234, '12.34'],
    ['EUR', -250, '-2.5'],
    ['GBP', 1, '0.01'],
    // Special cases: two decimals in the Stripe API whatever ISO 4217 (or the zero-decimal list) says.
    ['ISK', 500, '5'],
    ['UGX', 500, '5'],
    ['HUF', 12345, '123.45'],
    ['TWD', 80000, '800'],
    // Not in any Stripe list: two decimals.
    ['ZAR', 1999, '19.99'],
  ])('%s %d → %s', (currency, amount, expected) => {
    expect(fromStripeAmount(amount, currency).toFixed()).toBe(expected);
  });

  it('knows each listed currency', () => {
    for (const c of STRIPE_ZERO_DECIMAL) expect(stripeExponent(c)).toBe(0);
    for (const c of STRIPE_THREE_DECIMAL) expect(stripeExponent(c)).toBe(3);
    for (const c of STRIPE_TWO_DECIMAL_SPECIAL_CASES) expect(stripeExponent(c)).toBe(2);
    expect(STRIPE_ZERO_DECIMAL).not.toContain('UGX');
    expect(STRIPE_ZERO_DECIMAL).not.toContain('ISK');
  });

  it('refuses amounts that are not integers', () => {
    expect(() => fromStripeAmount(12.5, 'USD')).toThrow(/integers/);
    expect(() => fromStripeAmount(Number.NaN, 'USD')).toThrow();
    expect(() => fromStripeAmount(2 ** 53, 'USD')).toThrow();
  });

  it('reads *_decimal strings exactly, fractions of a minor unit included', () => {
    expect(fromStripeDecimal('312.5', 'USD').toFixed()).toBe('3.125');
    expect(fromStripeDecimal('0.000000000001', 'JPY').toFixed()).toBe('0.000000000001');
    expect(fromStripeDecimal('1234', 'KWD').toFixed()).toBe('1.234');
    expect(() => fromStripeDecimal('1e3', 'USD')).toThrow();
  });
});

describe('Stripe signature', () => {
  const body = '{"id":"evt_1","type":"customer.created"}';
  const raw = Buffer.from(body);
  const req = (header: string | undefined, receivedAt = RECEIVED): WebhookRequest => ({
    headers: header === undefined ? {} : { 'stripe-signature': header },
    rawBody: raw,
    contentType: 'application/json',
    receivedAt,
  });

  it('signs `${t}.${body}` keyed with the whsec_ secret as given (not decoded)', () => {
    expect(stripeConnector.sign(raw, SECRET, RECEIVED)).toEqual({ 'stripe-signature': `t=${NOW_S},v1=${v1(SECRET, NOW_S, body)}` });
  });

  it('accepts the header when any v1 matches, ignoring v0 and unknown schemes', () => {
    const header = `t=${NOW_S},v1=${v1('whsec_other', NOW_S, body)},v0=${v1(SECRET, NOW_S, body)},v1=${v1(SECRET, NOW_S, body)},x9=zz`;
    expect(stripeConnector.verify(req(header), settings())).toEqual({ ok: true });
  });

  it('refuses a v0-only header and a header without timestamp', () => {
    expect(stripeConnector.verify(req(`t=${NOW_S},v0=${v1(SECRET, NOW_S, body)}`), settings()).ok).toBe(false);
    expect(stripeConnector.verify(req(`v1=${v1(SECRET, NOW_S, body)}`), settings()).ok).toBe(false);
    expect(stripeConnector.verify(req(undefined), settings()).ok).toBe(false);
  });

  it('refuses a key that is the decoded secret', () => {
    const decoded = Buffer.from(SECRET.slice('whsec_'.length), 'base64').toString('latin1');
    const header = `t=${NOW_S},v1=${v1(decoded, NOW_S, body)}`;
    expect(stripeConnector.verify(req(header), settings()).ok).toBe(false);
  });

  it('holds the timestamp to the tolerance in both directions (boundary included)', () => {
    for (const [offset, ok] of [
      [-300, true],
      [300, true],
      [-301, false],
      [301, false],
    ] as const) {
      const t = NOW_S + offset;
      expect(stripeConnector.verify(req(`t=${t},v1=${v1(SECRET, t, body)}`), settings()).ok).toBe(ok);
    }
  });

  it('matches any configured secret and says nothing about the secret in the reason', () => {
    const t = NOW_S;
    const header = `t=${t},v1=${v1('whsec_new', t, body)}`;
    expect(stripeConnector.verify(req(header), settings({ secrets: [new Secret(SECRET), new Secret('whsec_new')] }))).toEqual({ ok: true });
    const failed = stripeConnector.verify(req(header), settings());
    expect(failed.ok).toBe(false);
    expect(JSON.stringify(failed)).not.toContain(SECRET);
  });
});

interface TestEvent {
  [key: string]: unknown;
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> & { lines: { object?: string; has_more?: boolean; data: Record<string, unknown>[] } } };
}

/** One invoice in both Stripe shapes: 2 × 19.99 with 4.00 off and 10% exclusive tax, 3 × 5.00 untaxed. */
function invoiceEvent(shape: 'acacia' | 'basil'): TestEvent {
  const lines: Record<string, unknown>[] =
    shape === 'acacia'
      ? [
          {
            id: 'il_1',
            amount: 3998,
            description: 'T-shirt',
            quantity: 2,
            price: { id: 'price_1', product: 'prod_1', tax_behavior: 'exclusive', unit_amount: 1999, unit_amount_decimal: '1999' },
            discount_amounts: [{ amount: 400, discount: 'di_1' }],
            tax_amounts: [{ amount: 360, inclusive: false, tax_rate: 'txr_1', taxable_amount: 3598 }],
          },
          {
            id: 'il_2',
            amount: 1500,
            description: 'Sticker',
            quantity: 3,
            price: { id: 'price_2', product: { id: 'prod_2', object: 'product' }, tax_behavior: 'exclusive', unit_amount: 500, unit_amount_decimal: '500' },
            discount_amounts: [],
            tax_amounts: [],
          },
        ]
      : [
          {
            id: 'il_1',
            amount: 3998,
            description: 'T-shirt',
            quantity: 2,
            pricing: { type: 'price_details', price_details: { price: 'price_1', product: 'prod_1' }, unit_amount_decimal: '1999' },
            discount_amounts: [{ amount: 400, discount: 'di_1' }],
            pretax_credit_amounts: [{ amount: 400, type: 'discount', discount: 'di_1' }],
            taxes: [{ amount: 360, tax_behavior: 'exclusive', taxability_reason: 'standard_rated', taxable_amount: 3598, type: 'tax_rate_details' }],
          },
          {
            id: 'il_2',
            amount: 1500,
            description: 'Sticker',
            quantity: 3,
            pricing: { type: 'price_details', price_details: { price: 'price_2', product: 'prod_2' }, unit_amount_decimal: '500' },
            discount_amounts: [],
            pretax_credit_amounts: [],
            taxes: [],
          },
        ];
  const totals =
    shape === 'acacia'
      ? { tax: 360, total_tax_amounts: [{ amount: 360, inclusive: false, tax_rate: 'txr_1', taxable_amount: 3598 }] }
      : { total_taxes: [{ amount: 360, tax_behavior: 'exclusive', taxable_amount: 3598, type: 'tax_rate_details' }], parent: null };
  return {
    id: 'evt_1Same',
    object: 'event',
    api_version: shape === 'acacia' ? '2024-06-20' : '2025-03-31.basil',
    created: 1795168800,
    type: 'invoice.paid',
    data: {
      object: {
        id: 'in_1Same',
        number: 'INV-7',
        status: 'paid',
        currency: 'usd',
        created: 1795168000,
        status_transitions: { finalized_at: 1795168100, paid_at: 1795168700 },
        customer: 'cus_1',
        customer_name: 'Ada',
        customer_email: 'ada@example.com',
        customer_address: { line1: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701', country: 'US' },
        lines: { object: 'list', has_more: false, data: lines },
        subtotal: 5498,
        subtotal_excluding_tax: 5498,
        total: 5458,
        total_excluding_tax: 5098,
        ...totals,
      },
    },
  };
}

describe('Stripe invoices', () => {
  it('maps the pre-2025-03 and the 2025-03-31.basil shapes to the same canonical invoice', () => {
    const acacia = wire(parse(invoiceEvent('acacia')));
    const basil = wire(parse(invoiceEvent('basil')));
    expect(basil).toEqual(acacia);
    expect(acacia).toEqual([
      expect.objectContaining({
        id: 'stripe:evt_1Same',
        type: 'invoice.upserted',
        data: expect.objectContaining({
          status: 'paid',
          tax_inclusive: false,
          lines: [
            { id: 'il_1', product_id: 'prod_1', description: 'T-shirt', unit_price: '19.99', quantity: '2', discount: '4', tax_amount: '3.6' },
            { id: 'il_2', product_id: 'prod_2', description: 'Sticker', unit_price: '5', quantity: '3' },
          ],
          subtotal: '54.98',
          tax_total: '3.6',
          total: '54.58',
        }),
      }),
    ]);
  });

  it('uses the configured source for the record key', () => {
    expect(wire(parse(invoiceEvent('basil'), settings({ source: 'stripe_us' })))).toEqual([
      expect.objectContaining({ record: { kind: 'transaction', source: 'stripe_us', external_id: 'in_1Same' } }),
    ]);
  });

  it('refuses an invoice mixing tax-inclusive and tax-exclusive lines', () => {
    const event = invoiceEvent('basil');
    event.data.object.lines.data[1]!.taxes = [{ amount: 45, tax_behavior: 'inclusive', taxability_reason: 'standard_rated', taxable_amount: 1455, type: 'tax_rate_details' }];
    const result = parse(event);
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && result.fields).toEqual({ 'data.object.lines': [expect.stringMatching(/mix/)] });
  });

  it('reads tax inclusion from the amounts when no line says (subtotal_excluding_tax below subtotal)', () => {
    const event = invoiceEvent('basil');
    for (const line of event.data.object.lines.data) line.taxes = [];
    Object.assign(event.data.object, { total_taxes: [], subtotal_excluding_tax: 5000 });
    expect(wire(parse(event))).toEqual([expect.objectContaining({ data: expect.objectContaining({ tax_inclusive: true }) })]);
  });

  it('turns any void invoice into invoice.cancelled, whatever event reports it', () => {
    const event = invoiceEvent('basil');
    event.type = 'invoice.updated';
    event.data.object.status = 'void';
    expect(wire(parse(event))).toEqual([
      expect.objectContaining({ type: 'invoice.cancelled', data: expect.objectContaining({ status: 'cancelled' }) }),
    ]);
  });

  it('ignores drafts and unknown event types, keeping the delivery id', () => {
    const draft = invoiceEvent('basil');
    draft.type = 'invoice.updated';
    draft.data.object.status = 'draft';
    expect(parse(draft)).toMatchObject({ kind: 'ignored', topic: 'invoice.updated', deliveryId: 'evt_1Same' });
    expect(parse({ id: 'evt_2', type: 'charge.refunded', created: 1, data: { object: {} } })).toMatchObject({ kind: 'ignored', deliveryId: 'evt_2' });
  });

  it('names the failing field of an invalid payload', () => {
    const event = invoiceEvent('basil');
    event.data.object.currency = 'US Dollar';
    const result = parse(event);
    expect(result).toMatchObject({ kind: 'invalid', topic: 'invoice.paid', deliveryId: 'evt_1Same' });
    expect(Object.keys(result.kind === 'invalid' ? (result.fields ?? {}) : {})).toEqual(['data.object.currency']);
  });
});

describe('Stripe credit notes', () => {
  const note = (object: Record<string, unknown>) => ({ id: 'evt_cn', type: 'credit_note.created', created: 1795168800, data: { object } });

  it('computes the amount as total minus tax when total_excluding_tax is absent, and leaves an unlinked credit unlinked', () => {
    const events = wire(
      parse(
        note({
          id: 'cn_1',
          status: 'issued',
          currency: 'kwd',
          created: 1795168500,
          customer: 'cus_1',
          invoice: null,
          total: 11550,
          total_taxes: [{ amount: 550, tax_behavior: 'exclusive', taxable_amount: 11000 }],
          lines: { data: [{ id: 'cnli_1', amount: 11000, quantity: null, unit_amount: null, description: 'Credit' }], has_more: false },
        }),
      ),
    );
    expect(events).toEqual([
      expect.objectContaining({
        type: 'refund.created',
        record: { kind: 'transaction', source: 'stripe', external_id: 'refund-cn_1' },
        data: {
          issued_at: '2026-11-20T09:55:00Z',
          currency: 'KWD',
          amount: '11',
          tax_amount: '0.55',
          tax_inclusive: false,
          lines: [{ id: 'cnli_1', description: 'Credit', unit_price: '11', quantity: '1' }],
          customer: { external_id: 'cus_1' },
        },
      }),
    ]);
  });
});

describe('Stripe line amounts are authoritative (issue 14, item 2)', () => {
  // [amount (minor units), unit_amount_decimal, quantity, currency] → unit_price × quantity = amount exactly
  it.each([
    ['an ordinary line: 2 × 19.99', 3998, '1999', '2', 'usd', '19.99', '2'],
    ['a trial: amount 0 against a price of 20.00', 0, '2000', '1', 'usd', '0', '1'],
    ['a proration credit: −15.00 against a price of 15.00', -1500, '1500', '1', 'usd', '-15', '1'],
    ['a proration for 2 seats: 45.00 = 22.50 × 2 against 30.00 each', 4500, '3000', '2', 'usd', '22.5', '2'],
    ['a proration that does not divide: 10.00 over 3 seats → one unit of 10.00', 1000, '500', '3', 'usd', '10', '1'],
    ['a fractional list price that matches: 3.125 × 4', 1250, '312.5', '4', 'usd', '3.125', '4'],
    ['JPY: 3300 = 1100 × 3', 3300, '1100', '3', 'jpy', '1100', '3'],
    ['no quantity: one unit of the amount', 700, '350', undefined, 'usd', '7', '1'],
  ])('%s', (_what, amount, unit, quantity, currency, unitPrice, qty) => {
    const out = unitAndQuantity(amount, unit, quantity, currency);
    expect([out.unit_price.toFixed(), out.quantity.toFixed()]).toEqual([unitPrice, qty]);
  });
});

describe('ids that are not well-formed Unicode', () => {
  it('refuses an event id with a lone surrogate as invalid (kept as a dead letter), rather than failing to store it', () => {
    const result = parse({ id: 'evt_\ud800x', object: 'event', created: NOW_S, type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } });
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && JSON.stringify(result.fields)).toMatch(/lone surrogate/);
  });

  it('refuses a customer id with a lone surrogate the same way', () => {
    const result = parse({ id: 'evt_1', object: 'event', created: NOW_S, type: 'customer.created', data: { object: { id: 'cus_\udc00', object: 'customer' } } });
    expect(result.kind).toBe('invalid');
  });
});
