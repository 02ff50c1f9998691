import { describe, expect, it } from 'vitest';
import { mapXeroInvoice } from '../../../../src/connectors/xero/map.js';
import { XeroInvoice, XeroInvoicesAnswer, readXeroItems } from '../../../../src/connectors/xero/schemas.js';
import { InvoiceData } from '../../../../src/domain/events.js';
import { Money } from '../../../../src/domain/money.js';
import { MappingSettings, mapInvoice } from '../../../../src/mapping/index.js';
import { SOURCE, apiFixture, events, expectAmount, records, wire, type Wire } from './helpers.js';

/**
 * Each invoice fixture of test/fixtures/accounting/xero/api/ mapped, against the amounts worked out
 * by hand in docs/research/accounting-payloads.md ("Xero amounts, by hand"), which the fixtures
 * repeat in `handComputed`.
 */

const ctx = { source: SOURCE };
const invoicesOf = (name: string) => records(apiFixture(name).response.body, 'Invoices', XeroInvoice);
const one = (name: string, index = 0) => invoicesOf(name)[index]!.value;

interface HandLine {
  unit_price: string;
  quantity: string;
  discount?: string;
  tax: string;
  net?: string;
  gross?: string;
}

/** Every line against its hand-computed figures; the line amount after discount (gross when prices include tax) too. */
function expectLines(lines: Record<string, unknown>[], hand: HandLine[], inclusive = false): void {
  expect(lines).toHaveLength(hand.length);
  hand.forEach((h, i) => {
    const line = lines[i]!;
    expectAmount(line.unit_price, h.unit_price);
    expectAmount(line.quantity, h.quantity);
    if (h.discount === undefined || new Money(h.discount).isZero()) expect(line.discount).toBeUndefined();
    else expectAmount(line.discount, h.discount);
    expectAmount(line.tax_amount, h.tax);
    const after = new Money(line.unit_price as string).times(line.quantity as string).minus((line.discount as string | undefined) ?? 0);
    expectAmount(after.toFixed(), inclusive ? h.gross! : h.net!);
  });
}

/** The invoice also makes a valid tax-engine body (src/mapping), the next step it takes. */
function expectSendable(event: Wire): void {
  const mapped = mapInvoice(InvoiceData.parse(event.data), { key: { kind: 'transaction', source: SOURCE, external_id: event.record.external_id }, settings: MappingSettings.parse({}) });
  expect(mapped.kind, JSON.stringify(mapped)).toBe('send');
}

describe('INV-0101: exclusive, a DiscountRate line, a DiscountAmount line and an untaxed line', () => {
  const fixture = apiFixture('real-invoice-exclusive-line-discounts');
  const hand = fixture.handComputed as { lines: HandLine[]; subtotal: string; tax_total: string; total: string; total_discount: string };
  const [event] = wire(mapXeroInvoice(one('real-invoice-exclusive-line-discounts'), ctx));

  it('is an invoice.upserted keyed by InvoiceID, versioned by UpdatedDateUTC', () => {
    expect(event).toMatchObject({
      id: 'xero:a03ffcd2-5d91-4c7e-b483-318584e9e439:1794967449000',
      type: 'invoice.upserted',
      occurred_at: '2026-11-18T02:04:09Z',
      precedence: 10,
      connector: 'xero',
      record: { kind: 'transaction', source: SOURCE, external_id: 'a03ffcd2-5d91-4c7e-b483-318584e9e439' },
    });
    expect(event!.final).toBeUndefined();
    expect(event!.data).toMatchObject({
      number: 'INV-0101',
      issued_at: '2026-11-16T00:00:00Z',
      status: 'active',
      currency: 'NZD',
      tax_inclusive: false,
      customer: { external_id: '430fa14a-f945-44d3-9f97-5df5e28441b8', name: 'Liam Gallagher' },
      updated_at: '2026-11-18T02:04:09Z',
    });
    // CurrencyRate 1: a base-currency invoice states no rate.
    expect(event!.data.exchange_rate).toBeUndefined();
  });

  it('has the hand-computed lines: 30.00 × 2 less 6.00, 19.95 less 1.95, 28.00 untaxed', () => {
    const lines = event!.data.lines as Record<string, unknown>[];
    expectLines(lines, hand.lines);
    expect(lines.map((l) => [l.sku, l.name, l.tax_code, l.taxable])).toEqual([
      ['MIC-STAND', 'Mic Stand', 'OUTPUT2', undefined],
      ['BOOK', 'Fish out of Water', 'OUTPUT2', undefined],
      [undefined, 'Donation to the tour fund', 'NONE', false],
    ]);
    expect(lines[0]!.id).toBe('b18f39d9-7739-4246-9288-72afe939d2d5');
    const discounts = lines.reduce((sum, l) => sum.plus((l.discount as string | undefined) ?? 0), new Money(0));
    expectAmount(discounts.toFixed(), hand.total_discount);
  });

  it('keeps Xero\'s totals: 100.00 + 10.80 = 110.80', () => {
    expectAmount(event!.data.subtotal, hand.subtotal);
    expectAmount(event!.data.tax_total, hand.tax_total);
    expectAmount(event!.data.total, hand.total);
    expectSendable(event!);
  });
});

describe('INV-0102: inclusive, a 50% DiscountRate line', () => {
  const fixture = apiFixture('real-invoice-inclusive-line-discount');
  const hand = fixture.handComputed as { lines: HandLine[]; subtotal: string; tax_total: string; total: string };
  const [event] = wire(mapXeroInvoice(one('real-invoice-inclusive-line-discount'), ctx));

  it('has gross lines (23.00 × 3; 46.00 less 23.00) and net totals from Xero', () => {
    expect(event!.data.tax_inclusive).toBe(true);
    expectLines(event!.data.lines as Record<string, unknown>[], hand.lines, true);
    expectAmount(event!.data.subtotal, hand.subtotal);
    expectAmount(event!.data.tax_total, hand.tax_total);
    expectAmount(event!.data.total, hand.total);
    expectSendable(event!);
  });
});

describe('INV-0104: USD in an NZD organisation', () => {
  const fixture = apiFixture('real-invoice-multicurrency-usd');
  const hand = fixture.handComputed as {
    lines: HandLine[];
    exchange_rate_as_given: string;
    subtotal: string;
    tax_total: string;
    total: string;
    base_currency_NZD_if_base_equals_amount_divided_by_rate: { subtotal: string; total: string };
  };
  const [event] = wire(mapXeroInvoice(one('real-invoice-multicurrency-usd'), ctx));

  it('is in USD with CurrencyRate 0.625 as Xero gives it (base = amount ÷ rate: 500 ÷ 0.625 = 800 NZD)', () => {
    expect(event!.data.currency).toBe('USD');
    expectAmount(event!.data.exchange_rate, hand.exchange_rate_as_given);
    expectLines(event!.data.lines as Record<string, unknown>[], hand.lines);
    expectAmount(event!.data.subtotal, hand.subtotal);
    expectAmount(event!.data.tax_total, hand.tax_total);
    expectAmount(event!.data.total, hand.total);
    const base = hand.base_currency_NZD_if_base_equals_amount_divided_by_rate;
    expectAmount(new Money(event!.data.total as string).dividedBy(event!.data.exchange_rate as string).toFixed(), base.total);
    expectSendable(event!);
  });
});

describe('the If-Modified-Since pages: NoTax, VOIDED, DELETED', () => {
  const page1 = invoicesOf('real-invoices-page-1-of-2-if-modified-since');
  const hand = apiFixture('real-invoices-page-1-of-2-if-modified-since').handComputed as Record<string, { lines?: HandLine[]; subtotal: string; tax_total: string; total: string }>;

  it('INV-0103 (NoTax): tax-exclusive, every line not taxable, 4 × 10.00 = 40.00', () => {
    const [event] = wire(mapXeroInvoice(page1[0]!.value, { ...ctx, path: page1[0]!.path }));
    expect(event!.data.tax_inclusive).toBe(false);
    expectLines(event!.data.lines as Record<string, unknown>[], hand['INV-0103']!.lines!);
    expect((event!.data.lines as Record<string, unknown>[]).every((l) => l.taxable === false)).toBe(true);
    expectAmount(event!.data.total, hand['INV-0103']!.total);
    expectSendable(event!);
  });

  it('INV-0105 (VOIDED): an invoice.cancelled, final, that keeps the amounts (40.00 + 6.00 = 46.00)', () => {
    const [event] = wire(mapXeroInvoice(page1[1]!.value, ctx));
    expect(event).toMatchObject({ type: 'invoice.cancelled', precedence: 30, final: true, record: { external_id: 'c45720a1-ade3-4a38-a064-d15489be6841' } });
    expect(event!.data.status).toBe('cancelled');
    expectAmount(event!.data.subtotal, hand['INV-0105']!.subtotal);
    expectAmount(event!.data.tax_total, hand['INV-0105']!.tax_total);
    expectAmount(event!.data.total, hand['INV-0105']!.total);
  });

  it('reads the list answer with its pagination, for the fetch job\'s paging', () => {
    const answer = XeroInvoicesAnswer.parse(apiFixture('real-invoices-page-1-of-2-if-modified-since').response.body);
    expect(answer.pagination).toMatchObject({ page: 1, pageSize: 2, pageCount: 2, itemCount: 3 });
    expect(readXeroItems('Invoices', answer.Invoices, XeroInvoice).map((i) => i.ok && i.value.InvoiceNumber)).toEqual(['INV-0103', 'INV-0105']);
  });

  it('INV-0106 (DELETED, never authorised): an invoice.deleted, final, with no data', () => {
    const [event] = wire(mapXeroInvoice(one('real-invoices-page-2-of-2-deleted'), ctx));
    expect(event).toMatchObject({ type: 'invoice.deleted', final: true, precedence: 30, data: {}, record: { external_id: '0e64a623-c2a1-446a-93ed-eb897f118cbc' } });
  });
});

describe('states and kinds', () => {
  const base = apiFixture('real-invoice-exclusive-line-discounts').response.body.Invoices as Record<string, unknown>[];
  const variant = (overrides: Record<string, unknown>) => XeroInvoice.parse({ ...base[0], ...overrides });

  it('ignores drafts, submitted invoices and bills, with a reason', () => {
    for (const Status of ['DRAFT', 'SUBMITTED']) {
      const result = mapXeroInvoice(variant({ Status }), ctx);
      expect(result.kind).toBe('ignore');
      expect(result.kind === 'ignore' && result.reason).toMatch(new RegExp(Status));
    }
    expect(mapXeroInvoice(variant({ Type: 'ACCPAY' }), ctx)).toEqual({ kind: 'ignore', reason: 'a bill (ACCPAY): purchases carry no sales tax' });
  });

  it('PAID is status paid, above AUTHORISED within one millisecond', () => {
    const [event] = wire(mapXeroInvoice(variant({ Status: 'PAID' }), ctx));
    expect(event).toMatchObject({ precedence: 20, data: { status: 'paid' } });
  });

  it('an unknown Status or LineAmountTypes is invalid, naming Xero\'s field', () => {
    expect(mapXeroInvoice(variant({ Status: 'ARCHIVED' }), { ...ctx, path: 'Invoices[4].' })).toMatchObject({ kind: 'invalid', fields: { 'Invoices[4].Status': ['unknown status ARCHIVED'] } });
    expect(mapXeroInvoice(variant({ LineAmountTypes: 'Gross' }), ctx)).toMatchObject({ kind: 'invalid', fields: { LineAmountTypes: ['unknown value Gross'] } });
  });

  it('two reads of one invoice order by UpdatedDateUTC and keep their ids apart', () => {
    const [older] = events(mapXeroInvoice(variant({ UpdatedDateUTC: '/Date(1794967448999+0000)/' }), ctx));
    const [newer] = events(mapXeroInvoice(variant({ Status: 'PAID' }), ctx));
    expect(Date.parse(older!.occurred_at)).toBeLessThan(Date.parse(newer!.occurred_at));
    expect(older!.id).not.toBe(newer!.id);
  });

  it('a record whose amount is not an exact JSON number fails its schema, named by its path in the answer', () => {
    const items = readXeroItems('Invoices', [{ ...base[0], Total: 0.1 + 0.2 }], XeroInvoice);
    expect(items[0]).toMatchObject({ ok: false, fields: { 'Invoices[0].Total': [expect.stringMatching(/significant digits/)] } });
    expect(XeroInvoicesAnswer.safeParse({ Invoices: 'none' }).success).toBe(false);
  });
});

describe('line edge cases', () => {
  const base = apiFixture('real-invoice-exclusive-line-discounts').response.body.Invoices as Record<string, unknown>[];
  const withLines = (LineItems: unknown[]) => XeroInvoice.parse({ ...base[0], LineItems });
  const lineOf = (item: Record<string, unknown>) => (wire(mapXeroInvoice(withLines([item]), ctx))[0]!.data.lines as Record<string, unknown>[])[0]!;

  it('keeps a zero-quantity line, without a discount even when it states a rate', () => {
    const line = lineOf({ Description: 'Cancelled item', Quantity: 0, UnitAmount: 30, DiscountRate: 10, LineAmount: 0, TaxType: 'OUTPUT2', TaxAmount: 0 });
    expectAmount(line.quantity, '0');
    expectAmount(line.unit_price, '30.00');
    expect(line.discount).toBeUndefined();
  });

  it('takes a rate whose result has 3 decimals as Xero charged it: 19.95 at 10% is LineAmount 17.96, discount 1.99', () => {
    // Xero's Quotes example: 19.95 × 0.9 = 17.955, charged as 17.96 (TotalDiscount 1.99), GST 2.69 on it.
    const line = lineOf({ Description: 'Book', Quantity: 1, UnitAmount: 19.95, DiscountRate: 10, LineAmount: 17.96, TaxType: 'OUTPUT2', TaxAmount: 2.69 });
    expectAmount(line.discount, '1.99');
  });

  it('without LineAmount, the rate gives the exact 1.995, not rounded by taxsync', () => {
    const line = lineOf({ Description: 'Book', Quantity: 1, UnitAmount: 19.95, DiscountRate: 10, TaxType: 'OUTPUT2' });
    expectAmount(line.discount, '1.995');
  });

  it('a LineAmount above the undiscounted line is invalid, naming the line', () => {
    const result = mapXeroInvoice(withLines([{ Quantity: 1, UnitAmount: 10 }, { Quantity: 1, UnitAmount: 10, DiscountAmount: 1, LineAmount: 11 }]), { ...ctx, path: 'Invoices[0].' });
    expect(result).toMatchObject({ kind: 'invalid', fields: { 'Invoices[0].LineItems[1].LineAmount': [expect.stringMatching(/does not fit/)] } });
  });

  it('a text-only line (no amounts) is 0 × 1', () => {
    const line = lineOf({ Description: 'Thank you for your business' });
    expectAmount(line.unit_price, '0');
    expectAmount(line.quantity, '1');
  });

  it('the invoice\'s own TO address (US sales tax) is its shipping address', () => {
    const invoice = XeroInvoice.parse({
      ...base[0],
      InvoiceAddresses: [{ InvoiceAddressType: 'TO', AddressLine1: '1 Main St', City: 'Austin', Region: 'TX', PostalCode: '78701', Country: 'United States' }],
    });
    expect(wire(mapXeroInvoice(invoice, ctx))[0]!.data.addresses).toEqual({ shipping: { street: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } });
  });
});
