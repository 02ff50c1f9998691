import { describe, expect, it } from 'vitest';
import { Money } from '../../../../src/domain/money.js';
import { InvoiceData } from '../../../../src/domain/events.js';
import { DEFAULT_MAPPING_SETTINGS, invoiceAmount, mapInvoice } from '../../../../src/mapping/index.js';
import { mapQuickBooksDeleted, mapQuickBooksInvoice, mapQuickBooksSalesReceipt } from '../../../../src/connectors/quickbooks/map.js';
import { QboInvoiceAnswer, QboInvoiceQuery, QboSalesReceiptQuery, deletedEntityOf } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, n, only } from './qbo-fixtures.js';

/**
 * Every invoice and sales receipt fixture mapped, against the amounts worked out by hand in
 * docs/research/accounting-payloads.md ("QuickBooks amounts, by hand"), repeated here.
 */

const US = { source: 'quickbooks' };
const AU = { source: 'quickbooks', homeCurrency: 'AUD', companyCountry: 'AU' };

const invoice = (name: string, exchange = 0) => QboInvoiceAnswer.parse(apiAnswer(name, exchange)).Invoice;
const auInvoices = QboInvoiceQuery.parse(apiAnswer('real-query-invoices-au-tax-inclusive-excluded-not-applicable.json')).QueryResponse.Invoice;
const auInvoice = (id: string) => auInvoices.find((i) => i.Id === id)!;

const lineAmounts = (lines: Record<string, unknown>[] | undefined) => (lines ?? []).map((l) => [l.unit_price, l.quantity]);

describe('invoice 130 (US, tax-exclusive, 8% in TxnTaxDetail)', () => {
  const event = only(mapQuickBooksInvoice(invoice('real-invoice-us-sales-tax.json'), US));

  it('is invoice-130, versioned by its SyncToken, timed by LastUpdatedTime in UTC', () => {
    expect(event).toMatchObject({
      type: 'invoice.upserted',
      record: { kind: 'transaction', source: 'quickbooks', external_id: 'invoice-130' },
      // 09:02:11 at −08:00 = 17:02:11 UTC = 1795021331 s since the epoch.
      occurred_at: '2026-11-18T17:02:11Z',
      id: 'quickbooks:invoice:130:1795021331000:1',
      version: 1,
      precedence: 10,
      connector: 'quickbooks',
    });
  });

  it('has the three sales lines (the SubTotalLineDetail is skipped) and QuickBooks totals', () => {
    // 275.00 × 1 + 12.75 × 1 + 9.50 × 5 (= 47.50) = 335.25; 8% = 26.82; 362.07.
    expect(lineAmounts(event.data.lines)).toEqual([[n('275.00'), n('1')], [n('12.75'), n('1')], [n('9.50'), n('5')]]);
    expect(event.data).toMatchObject({ subtotal: n('335.25'), tax_total: n('26.82'), total: n('362.07'), tax_inclusive: false, status: 'active', currency: 'USD', number: '1037' });
    expect(event.data.discount).toBeUndefined();
    // TAX is a taxability flag, not a product classification: no tax_code, no taxable flag.
    expect(event.data.lines!.map((l) => [l.tax_code, l.taxable])).toEqual([[undefined, undefined], [undefined, undefined], [undefined, undefined]]);
    expect(event.data.lines![2]).toMatchObject({ id: '3', product_id: '3', sku: 'Concrete', name: 'Concrete for fountain installation' });
  });

  it('carries its customer inline, with the free-form billing address read from "City, ST ZIP"', () => {
    const street = { street: '5647 Cypress Hill Ave.', city: 'Middlefield', state: 'CA', zip: '94303' };
    expect(event.data.customer).toEqual({ external_id: '24', name: 'Sonnenschein Family Store', email: 'Familiystore@intuit.com', addresses: { billing: street, shipping: street } });
    expect(event.data.issued_at).toBe('2026-11-16T00:00:00Z');
  });
});

describe('invoice 271 (US, 10% transaction discount, ApplyTaxAfterDiscount false)', () => {
  const result = mapQuickBooksInvoice(invoice('real-invoice-us-discount-line.json'), US);
  const event = only(result);

  it('sends the discount as the invoice discount and QuickBooks tax as tax_total', () => {
    // 275.00 (TAX) + 4 × 35.00 = 140.00 (NON) = 415.00; 10% = 41.50; tax 8% × 275.00 = 22.00; 415 − 41.50 + 22 = 395.50.
    expect(lineAmounts(event.data.lines)).toEqual([[n('275'), n('1')], [n('35.00'), n('4')]]);
    expect(event.data.lines!.map((l) => l.taxable)).toEqual([undefined, false]);
    expect(event.data).toMatchObject({ discount: n('41.50'), tax_total: n('22.00'), total: n('395.50'), subtotal: n('415.00') });
  });

  it('says in a note that the engine will tax after the discount, and the body shows why: 19.80, not 22.00', () => {
    expect(result.kind === 'events' ? result.notes : []).toEqual([expect.stringContaining('ApplyTaxAfterDiscount is false')]);
    const data = InvoiceData.parse(event.data);
    // The refund base: 415.00 − 41.50 = 373.50.
    expect(invoiceAmount(data).equals(new Money('373.50'))).toBe(true);
    const body = mapInvoice(data, { key: { kind: 'transaction', source: 'quickbooks', external_id: 'invoice-271' }, settings: DEFAULT_MAPPING_SETTINGS });
    expect(body.kind).toBe('send');
    if (body.kind !== 'send') return;
    // The engine spreads 41.50 pro rata over 415.00: 41.50 × 275/415 = 27.50 onto the taxable line,
    // and taxes 275.00 − 27.50 = 247.50 × 8% = 19.80, 2.20 less than QuickBooks charged.
    expect(body.body.transaction_level_discount).toBe('41.5');
    expect(body.body.items!.map((i) => [i.unit_price, i.quantity, i.manual_sales_tax_rate])).toEqual([['275', '1', undefined], ['35', '4', '0']]);
  });
});

describe('AU invoices (GST 10%)', () => {
  it('165 TaxExcluded: net unit prices, its TaxCode as tax_code, paid (Balance 0)', () => {
    const event = only(mapQuickBooksInvoice(auInvoice('165'), AU));
    // 300 × 3.00 = 900.00; 300 × 10.00 = 3000.00; 3900.00; GST 390.00; 4290.00.
    expect(lineAmounts(event.data.lines)).toEqual([[n('3.00'), n('300')], [n('10.00'), n('300')]]);
    expect(event.data.lines!.map((l) => l.tax_code)).toEqual(['10', '10']);
    expect(event.data).toMatchObject({ tax_inclusive: false, status: 'paid', tax_total: n('390.00'), total: n('4290.00'), currency: 'AUD' });
    // ExchangeRate 1 on a home-currency invoice says nothing: not sent.
    expect(event.data.exchange_rate).toBeUndefined();
    expect(event.precedence).toBe(20);
    expect(event.data.addresses).toEqual({ billing: { street: '1 Success Way', city: 'Sydney', state: 'NSW', zip: '2000', country: 'AU' } });
  });

  it('185 TaxInclusive: the gross unit price is TaxInclusiveAmt ÷ Qty (UnitPrice 0.9090889 is net)', () => {
    const event = only(mapQuickBooksInvoice(auInvoice('185'), AU));
    // 450 ÷ 450 = 1.00 gross per unit; net 450 ÷ 1.1 = 409.0909… → 409.09 (Amount); tax 450 − 409.09 = 40.91.
    expect(lineAmounts(event.data.lines)).toEqual([[n('1.00'), n('450')]]);
    expect(event.data.lines![0]!.tax_amount).toBe(n('40.91'));
    expect(event.data).toMatchObject({ tax_inclusive: true, tax_total: n('40.91'), total: n('450.00') });
    const data = InvoiceData.parse(event.data);
    expect(invoiceAmount(data).minus(data.tax_total!).equals(new Money('409.09'))).toBe(true);
  });

  it('192 TaxInclusive: 6600 ÷ 3 = 2200.00 gross per unit; its refund base 6600 − 600 = 6000.00', () => {
    const event = only(mapQuickBooksInvoice(auInvoice('192'), AU));
    expect(lineAmounts(event.data.lines)).toEqual([[n('2200.00'), n('3')]]);
    expect(event.data).toMatchObject({ tax_inclusive: true, tax_total: n('600'), total: n('6600'), status: 'active' });
    const data = InvoiceData.parse(event.data);
    expect(invoiceAmount(data).minus(data.tax_total!).equals(new Money('6000.00'))).toBe(true);
  });

  it('233 NotApplicable (out of scope of tax): tax-exclusive, every line not taxable, so the engine taxes nothing', () => {
    const event = only(mapQuickBooksInvoice(auInvoice('233'), AU));
    expect(lineAmounts(event.data.lines)).toEqual([[n('500.00'), n('1')]]);
    expect(event.data.lines![0]!.taxable).toBe(false);
    expect(event.data).toMatchObject({ tax_inclusive: false, tax_total: n('0'), total: n('500') });
  });
});

describe('sales receipt 38 (paid at once, 10% discount)', () => {
  const receipt = QboSalesReceiptQuery.parse(apiAnswer('real-salesreceipt-us-discount.json')).QueryResponse.SalesReceipt[0]!;

  it('is an invoice of its own id space, paid, with the discount: 2.5 × 35.00 = 87.50, 10% = 8.75, 78.75', () => {
    const event = only(mapQuickBooksSalesReceipt(receipt, US));
    expect(event).toMatchObject({ type: 'invoice.upserted', record: { external_id: 'salesreceipt-38' }, precedence: 20, id: 'quickbooks:salesreceipt:38:1444241746000:0' });
    expect(lineAmounts(event.data.lines)).toEqual([[n('35.00'), n('2.5')]]);
    expect(event.data).toMatchObject({ status: 'paid', discount: n('8.75'), tax_total: n('0'), total: n('78.75') });
    expect(event.data.lines![0]!.taxable).toBe(false);
  });
});

describe('invoice 264 voided, invoice 266 deleted', () => {
  it('before the void: an invoice of 100.00 (a line with Amount only: one unit at it)', () => {
    const event = only(mapQuickBooksInvoice(invoice('real-invoice-void-and-delete.json', 0), US));
    expect(event.type).toBe('invoice.upserted');
    expect(lineAmounts(event.data.lines)).toEqual([[n('100.00'), n('1')]]);
  });

  it('after the void: invoice.cancelled, without the zeroes, at a higher version', () => {
    const event = only(mapQuickBooksInvoice(invoice('real-invoice-void-and-delete.json', 1), US));
    expect(event).toMatchObject({ type: 'invoice.cancelled', record: { external_id: 'invoice-264' }, version: 1, precedence: 30, occurred_at: '2022-09-02T12:58:56Z' });
    expect(event.data).toEqual({ number: '1041', status: 'cancelled', updated_at: '2022-09-02T12:58:56Z' });
    expect(event.final).toBeUndefined();
  });

  it('delete: the answer holds only the Id; with the notice time it is invoice.deleted', () => {
    const found = deletedEntityOf(apiAnswer('real-invoice-void-and-delete.json', 2));
    expect(found).toMatchObject({ entity: 'Invoice', deleted: { Id: '266' } });
    const event = only(mapQuickBooksDeleted('Invoice', found!.deleted, { ...US, occurredAt: '2026-11-18T17:04:35.000Z' }));
    expect(event).toMatchObject({ type: 'invoice.deleted', record: { kind: 'transaction', external_id: 'invoice-266' }, occurred_at: '2026-11-18T17:04:35Z', data: {} });
    expect(event.id).toBe('quickbooks:invoice:266:1795021475000:deleted');
    expect(event.version).toBeUndefined();
  });
});
