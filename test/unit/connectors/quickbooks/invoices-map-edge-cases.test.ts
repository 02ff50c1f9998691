import { describe, expect, it } from 'vitest';
import { mapQuickBooksInvoice, type QuickBooksMapResult } from '../../../../src/connectors/quickbooks/map.js';
import { QboInvoice } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, n, only } from './qbo-fixtures.js';

/** Invoices built on the fixtures with one thing changed, for what no fixture shows. */

const AU = { source: 'quickbooks', homeCurrency: 'AUD', companyCountry: 'AU' };
const US = { source: 'quickbooks' };

type Json = Record<string, unknown>;
const auRaw = (apiAnswer('real-query-invoices-au-tax-inclusive-excluded-not-applicable.json') as { QueryResponse: { Invoice: Json[] } }).QueryResponse.Invoice;
const usRaw = (apiAnswer('real-invoice-us-discount-line.json') as { Invoice: Json }).Invoice;

/** Invoice 192 (TaxInclusive) or 271 (US), with `changes` laid over a copy. */
function au192(changes: Json = {}) {
  return QboInvoice.parse({ ...structuredClone(auRaw.find((i) => i.Id === '192')!), ...changes });
}
function us271(changes: Json = {}) {
  return QboInvoice.parse({ ...structuredClone(usRaw), ...changes });
}

const sale = (amount: number, detail: Json, description = 'Item') => ({ Description: description, Amount: amount, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: detail });

function fieldsOf(result: QuickBooksMapResult): Record<string, string[]> {
  if (result.kind !== 'invalid') throw new Error(`expected invalid, got ${result.kind}`);
  return result.fields;
}

describe('tax-inclusive lines', () => {
  it('a gross total that does not divide by the quantity becomes one unit at the gross, exactly', () => {
    // 3 units for 100.00 gross: 100 ÷ 3 = 33.333… has no exact decimal, so 1 × 100.00. Net 100 ÷ 1.1 = 90.91, tax 9.09;
    // QBO's UnitPrice 30.3030303 (net, 7 decimals) plays no part.
    const line = sale(90.91, { UnitPrice: 30.3030303, Qty: 3, TaxInclusiveAmt: 100, TaxCodeRef: { value: '10' } });
    const event = only(mapQuickBooksInvoice(au192({ Line: [line], TotalAmt: 100, TxnTaxDetail: { TotalTax: 9.09 } }), AU));
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('100.00'), quantity: n('1'), tax_amount: n('9.09') })]);
  });

  it('a net unit price with many decimals is not the unit price sent: 0.9090889 × 7 → TaxInclusiveAmt 7.00 ÷ 7 = 1.00', () => {
    const line = sale(6.36, { UnitPrice: 0.9090889, Qty: 7, TaxInclusiveAmt: 7, TaxCodeRef: { value: '10' } });
    const event = only(mapQuickBooksInvoice(au192({ Line: [line], TotalAmt: 7, TxnTaxDetail: { TotalTax: 0.64 } }), AU));
    // 7.00 − 6.36 = 0.64 GST.
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('1.00'), quantity: n('7'), tax_amount: n('0.64') })]);
  });

  it('a taxed line without TaxInclusiveAmt is refused, naming the QuickBooks field', () => {
    const line = sale(6000, { UnitPrice: 2000, Qty: 3, TaxCodeRef: { value: '10' } });
    expect(fieldsOf(mapQuickBooksInvoice(au192({ Line: [line] }), AU))).toEqual({
      'Invoice.Line[0].SalesItemLineDetail.TaxInclusiveAmt': ['missing: the gross price of a line of a TaxInclusive document is unknown without it'],
    });
  });

  it('without TaxInclusiveAmt, a document with no tax at all is gross = net', () => {
    const line = sale(50, { UnitPrice: 50, Qty: 1, TaxCodeRef: { value: 'FRE' } });
    const event = only(mapQuickBooksInvoice(au192({ Line: [line], TotalAmt: 50, TxnTaxDetail: { TotalTax: 0 } }), AU));
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('50'), quantity: n('1'), tax_code: 'FRE' })]);
  });

  it('a transaction discount in a TaxInclusive document is taken from the totals, gross: Σ gross − TotalAmt', () => {
    // 6600.00 gross less 10%: TotalAmt 5940.00, so the gross discount is 6600 − 5940 = 660.00, whatever its Amount says.
    const discount = { Amount: 600, DetailType: 'DiscountLineDetail', DiscountLineDetail: { PercentBased: true, DiscountPercent: 10 } };
    const lines = [...(auRaw.find((i) => i.Id === '192')!.Line as Json[]), discount];
    const event = only(mapQuickBooksInvoice(au192({ Line: lines, TotalAmt: 5940, TxnTaxDetail: { TotalTax: 540 } }), AU));
    expect(event.data).toMatchObject({ discount: n('660.00'), tax_inclusive: true });
  });

  it('a line discount in a TaxInclusive document is refused: whether TaxInclusiveAmt is before or after it is not documented', () => {
    const line = sale(5400, { UnitPrice: 2000, Qty: 3, TaxInclusiveAmt: 5940, DiscountRate: 10, TaxCodeRef: { value: '10' } });
    expect(Object.keys(fieldsOf(mapQuickBooksInvoice(au192({ Line: [line] }), AU)))).toEqual(['Invoice.Line[0].SalesItemLineDetail.DiscountAmt']);
  });
});

describe('discounts and lines of tax-exclusive invoices', () => {
  it('a percent discount line without an Amount is that percent of the subtotal, rounded half-up to the cent', () => {
    // 7.5% of 415.00 = 31.125 → 31.13.
    const lines = (usRaw.Line as Json[]).map((l) => (l.DetailType === 'DiscountLineDetail' ? { DetailType: 'DiscountLineDetail', DiscountLineDetail: { PercentBased: true, DiscountPercent: 7.5 } } : l));
    const event = only(mapQuickBooksInvoice(us271({ Line: lines }), US));
    expect(event.data.discount).toBe(n('31.13'));
  });

  it('a discount line with neither Amount nor percent is refused', () => {
    const lines = (usRaw.Line as Json[]).map((l) => (l.DetailType === 'DiscountLineDetail' ? { DetailType: 'DiscountLineDetail', DiscountLineDetail: { PercentBased: false } } : l));
    expect(Object.keys(fieldsOf(mapQuickBooksInvoice(us271({ Line: lines }), US)))).toEqual(['Invoice.Line[3].Amount']);
  });

  it('a line discount (DiscountAmt) is the difference between UnitPrice × Qty and the Amount charged', () => {
    // 4 × 35.00 = 140.00 listed, 125.00 charged: discount 15.00.
    const event = only(mapQuickBooksInvoice(us271({ Line: [sale(125, { UnitPrice: 35, Qty: 4, DiscountAmt: 15, TaxCodeRef: { value: 'TAX' } })] }), US));
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('35'), quantity: n('4'), discount: n('15.00') })]);
  });

  it('an Amount that UnitPrice × Qty does not give is what was charged: over the quantity when exact, else one unit', () => {
    const lines = [sale(100, { UnitPrice: 33.33, Qty: 3 }), sale(90, { UnitPrice: 31, Qty: 3 })];
    const event = only(mapQuickBooksInvoice(us271({ Line: lines }), US));
    // 33.33 × 3 = 99.99 ≠ 100.00 and 100 ÷ 3 is not exact → 1 × 100.00; 31 × 3 = 93 ≠ 90.00 → 90 ÷ 3 = 30.00 × 3.
    expect(event.data.lines!.map((l) => [l.unit_price, l.quantity])).toEqual([[n('100'), n('1')], [n('30.00'), n('3')]]);
  });

  it('a UnitPrice too long to be exact is read as absent, so the line is priced from its Amount', () => {
    // 100 ÷ 3 as a double (33.333333333333336, 17 digits): not necessarily what QuickBooks wrote; 100.00 over 3 is not exact → 1 × 100.00.
    const event = only(mapQuickBooksInvoice(us271({ Line: [sale(100, { UnitPrice: 100 / 3, Qty: 3 })] }), US));
    expect(event.data.lines!.map((l) => [l.unit_price, l.quantity])).toEqual([[n('100'), n('1')]]);
  });

  it('group lines are read through to the lines they bundle', () => {
    const group = { Amount: 415, DetailType: 'GroupLineDetail', GroupLineDetail: { Line: (usRaw.Line as Json[]).slice(0, 2) } };
    const event = only(mapQuickBooksInvoice(us271({ Line: [group] }), US));
    expect(event.data.lines!.map((l) => l.name)).toEqual(['Rock Fountain', 'Weekly Gardening Service']);
  });

  it('a line of a kind taxsync does not read is refused when it carries an amount, skipped when it does not', () => {
    const lines = [sale(275, { UnitPrice: 275, Qty: 1 }), { DetailType: 'DescriptionOnly', Description: 'Thanks!' }, { Amount: 5, DetailType: 'DepositLineDetail' }];
    expect(fieldsOf(mapQuickBooksInvoice(us271({ Line: lines }), US))).toEqual({ 'Invoice.Line[2].DetailType': ['a DepositLineDetail line with an amount is not one taxsync reads'] });
  });
});

describe('shipping', () => {
  it('a taxed SHIPPING_ITEM_ID line is the invoice shipping, kept out of the percent discount base', () => {
    const ship = sale(15, { ItemRef: { value: 'SHIPPING_ITEM_ID' }, UnitPrice: 15, Qty: 1, TaxCodeRef: { value: 'TAX' } }, 'Shipping');
    const event = only(mapQuickBooksInvoice(us271({ Line: [...(usRaw.Line as Json[]), ship] }), US));
    expect(event.data.shipping).toEqual({ amount: n('15') });
    expect(event.data.lines).toHaveLength(2);
  });

  it('a shipping line QuickBooks does not tax (NON) stays a line marked not taxable', () => {
    const ship = sale(15, { ItemRef: { value: 'SHIPPING_ITEM_ID' }, UnitPrice: 15, Qty: 1, TaxCodeRef: { value: 'NON' } }, 'Shipping');
    const event = only(mapQuickBooksInvoice(us271({ Line: [ship] }), US));
    expect(event.data.shipping).toBeUndefined();
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('15'), taxable: false })]);
  });
});

describe('document facts', () => {
  it('an unknown GlobalTaxCalculation is refused rather than guessed', () => {
    expect(Object.keys(fieldsOf(mapQuickBooksInvoice(au192({ GlobalTaxCalculation: 'TaxSometimes' }), AU)))).toEqual(['Invoice.GlobalTaxCalculation']);
  });

  it('without CurrencyRef the home currency is the currency; with neither the invoice is refused', () => {
    expect(only(mapQuickBooksInvoice(au192({ CurrencyRef: undefined }), AU)).data.currency).toBe('AUD');
    expect(Object.keys(fieldsOf(mapQuickBooksInvoice(us271({ CurrencyRef: undefined }), US)))).toEqual(['Invoice.CurrencyRef']);
  });

  it("a foreign-currency invoice carries QuickBooks' ExchangeRate", () => {
    const event = only(mapQuickBooksInvoice(au192({ CurrencyRef: { value: 'USD' }, ExchangeRate: 1.5243 }), AU));
    expect(event.data).toMatchObject({ currency: 'USD', exchange_rate: n('1.5243') });
  });

  it('a zero invoice without "Voided" in PrivateNote is an invoice, not a cancellation', () => {
    const zero = us271({ Line: [sale(0, { UnitPrice: 0, Qty: 1 })], TotalAmt: 0, TxnTaxDetail: { TotalTax: 0 }, PrivateNote: 'free sample' });
    expect(only(mapQuickBooksInvoice(zero, US)).type).toBe('invoice.upserted');
  });

  it('a note saying "Voided" on an invoice that still has amounts is not a void', () => {
    expect(only(mapQuickBooksInvoice(us271({ PrivateNote: 'Voided the old one, this replaces it' }), US)).type).toBe('invoice.upserted');
  });

  it('a JSON number too long to be exact is refused by the schema, naming the field', () => {
    // 12345678901234.567 as QuickBooks would send it: a double, which cannot hold those 17 digits.
    const parsed = QboInvoice.safeParse({ ...structuredClone(usRaw), TotalAmt: JSON.parse('12345678901234.567') as number });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['TotalAmt']);
  });
});
