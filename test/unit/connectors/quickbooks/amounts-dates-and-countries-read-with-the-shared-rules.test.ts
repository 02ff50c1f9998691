import { describe, expect, it } from 'vitest';
import { mapQuickBooksCustomer, mapQuickBooksDeleted, mapQuickBooksInvoice, quickBooksCreditApplications, quickBooksNotices } from '../../../../src/connectors/quickbooks/map.js';
import { QboCustomer, QboDateTime, QboInvoice, QboPaymentAnswer, quickBooksInstant } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, only, wire } from './qbo-fixtures.js';

/**
 * What changed when QuickBooks took the shared readers (src/connectors/shared): amounts held to
 * amountProblem under QBO's own field names, dates checked against the calendar, countries read
 * from ISO 3166-1, and fields taxsync never reads no longer checked.
 */

type Json = Record<string, unknown>;
const US = { source: 'quickbooks' };
const usRaw = (apiAnswer('real-invoice-us-discount-line.json') as { Invoice: Json }).Invoice;
const us271 = (changes: Json = {}): Json => ({ ...structuredClone(usRaw), ...changes });
const issuesOf = (raw: Json) => {
  const parsed = QboInvoice.safeParse(raw);
  if (parsed.success) throw new Error('expected the invoice to be refused');
  return parsed.error.issues.map((i) => i.path.join('.'));
};
const sale = (amount: number, detail: Json) => ({ Description: 'Item', Amount: amount, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: detail });

describe('amounts', () => {
  it.each([
    ['a string with 19 decimals', '0.1234567890123456789'],
    ['an exponent string', '1e5'],
    ['the smallest double', 5e-324],
    ['a string of 19 integer digits', '1234567890123456789'],
  ])('refuses %s as TotalAmt, naming QBO’s own field (it used to fail later, under a canonical name)', (_what, value) => {
    expect(issuesOf(us271({ TotalAmt: value }))).toEqual(['TotalAmt']);
  });

  it('refuses a UnitPrice outside the supported amounts, naming it', () => {
    expect(issuesOf(us271({ Line: [sale(100, { UnitPrice: '0.1234567890123456789', Qty: 1 })] }))).toEqual(['Line.0.SalesItemLineDetail.UnitPrice']);
    expect(issuesOf(us271({ Line: [sale(100, { UnitPrice: 5e-324, Qty: 1 })] }))).toEqual(['Line.0.SalesItemLineDetail.UnitPrice']);
  });

  it('still reads a UnitPrice that may not be exact (a long JSON number) as absent', () => {
    const invoice = QboInvoice.parse(us271({ Line: [sale(100, { UnitPrice: 100 / 3, Qty: 3 })] }));
    expect(invoice.Line![0]!.SalesItemLineDetail!.UnitPrice).toBeUndefined();
    expect(invoice.Line![0]!.SalesItemLineDetail!.Qty!.toFixed()).toBe('3');
  });

  it('reads an amount String() writes with an exponent, exactly', () => {
    const invoice = QboInvoice.parse(us271({ Line: [sale(100, { UnitPrice: 1e-7, Qty: 1 })] }));
    expect(invoice.Line![0]!.SalesItemLineDetail!.UnitPrice!.toFixed()).toBe('0.0000001');
  });
});

describe('dates', () => {
  it.each(['2026-02-30T10:00:00-08:00', '2025-02-29T10:00:00Z', '2026-11-18T24:00:00-08:00', '2026-11-18T23:60:00Z', '2026-04-31T10:00-0700'])(
    'refuses %s instead of rolling it over',
    (text) => {
      expect(quickBooksInstant(text)).toBeUndefined();
      expect(QboDateTime.safeParse(text).success).toBe(false);
    },
  );

  it('still reads real dates in every form QBO writes', () => {
    expect(quickBooksInstant('2024-02-29T10:00:00-08:00')).toBe('2024-02-29T18:00:00Z');
    expect(quickBooksInstant('2026-11-18T09:02:11-0700')).toBe('2026-11-18T16:02:11Z');
    expect(quickBooksInstant('2026-11-18T17:02:11.517123456Z')).toBe('2026-11-18T17:02:11.517Z');
    expect(quickBooksInstant('2026-11-18T09:02-08:00')).toBe('2026-11-18T17:02:00Z');
  });

  it('refuses an entity, a notice and a deletion dated 30 February, naming the field', () => {
    expect(issuesOf(us271({ MetaData: { LastUpdatedTime: '2026-02-30T10:00:00-08:00' } }))).toEqual(['MetaData.LastUpdatedTime']);
    const notice = { eventNotifications: [{ realmId: '1', dataChangeEvent: { entities: [{ name: 'Invoice', id: '1', operation: 'Update', lastUpdated: '2026-02-30T10:00:00.000Z' }] } }] };
    const result = quickBooksNotices(notice, { receivedAt: new Date('2026-11-18T17:07:41Z') });
    expect(result.kind === 'invalid' && Object.keys(result.fields)).toEqual(['eventNotifications[0].dataChangeEvent.entities[0].lastUpdated']);
    expect(mapQuickBooksDeleted('Invoice', { Id: '1' }, { ...US, occurredAt: '2026-02-30T10:00:00Z' }).kind).toBe('invalid');
  });
});

describe('document numbers', () => {
  it('refuses a DocNumber that is not well-formed Unicode at the schema, naming DocNumber', () => {
    expect(issuesOf(us271({ DocNumber: '1001\ud800' }))).toEqual(['DocNumber']);
  });
});

describe('countries', () => {
  const withCountry = (Country: string) => {
    const customer = QboCustomer.parse({ Id: '98', MetaData: { LastUpdatedTime: '2026-11-18T09:00:00-08:00' }, DisplayName: 'X', BillAddr: { Line1: '1 Calle Mayor', City: 'Madrid', Country } });
    return (only(mapQuickBooksCustomer(customer, US)).data.addresses as { billing: Json }).billing.country;
  };

  it('reads every ISO country by its English name (Spain was unknown) and the alpha-3 codes QBO users type', () => {
    expect(withCountry('Spain')).toBe('ES');
    expect(withCountry('Mexico')).toBe('MX');
    expect(withCountry('CAN')).toBe('CA');
    expect(withCountry('U.S.A.')).toBe('US');
  });

  it('takes two letters only when they are an ISO 3166-1 code (ZZ and EU passed before)', () => {
    expect(withCountry('ES')).toBe('ES');
    expect(withCountry('ZZ')).toBeUndefined();
    expect(withCountry('EU')).toBeUndefined();
    expect(withCountry('XK')).toBeUndefined();
  });
});

describe('fields taxsync does not read', () => {
  it('RemainingCredit and the TaxLine amounts and percents no longer refuse a document', () => {
    const base = wire(mapQuickBooksInvoice(QboInvoice.parse(us271()), US));
    const txnTax = usRaw.TxnTaxDetail as Json;
    const odd = us271({ RemainingCredit: 'n/a', TxnTaxDetail: { ...txnTax, TaxLine: [{ Amount: 'ten', DetailType: 'TaxLineDetail', TaxLineDetail: { TaxPercent: Number.POSITIVE_INFINITY, TaxRateRef: {} } }] } });
    expect(wire(mapQuickBooksInvoice(QboInvoice.parse(odd), US))).toEqual(base);
  });

  it("a Payment's TotalAmt and line Amounts no longer refuse it: only LinkedTxn is read", () => {
    const line = (TxnId: string, TxnType: string) => ({ Amount: 'ten', LinkedTxn: [{ TxnId, TxnType }] });
    const payment = QboPaymentAnswer.parse({ Payment: { Id: '9', TotalAmt: '0.1234567890123456789', Line: [line('1', 'Invoice'), line('3', 'CreditMemo')] } }).Payment;
    expect(quickBooksCreditApplications(payment)).toEqual([{ creditMemoId: '3', invoiceIds: ['1'] }]);
  });
});
