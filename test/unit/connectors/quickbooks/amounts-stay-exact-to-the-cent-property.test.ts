import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvoiceData } from '../../../../src/domain/events.js';
import { Decimal, Money, roundMoney } from '../../../../src/domain/money.js';
import { invoiceAmount } from '../../../../src/mapping/index.js';
import { mapQuickBooksInvoice } from '../../../../src/connectors/quickbooks/map.js';
import { QboAmount, QboInvoice } from '../../../../src/connectors/quickbooks/schemas.js';
import { only } from './qbo-fixtures.js';

/**
 * Properties over generated documents. Amounts are built as decimal text and handed to the schema
 * as JSON numbers (JSON.parse of that text), as QuickBooks sends them.
 */

const cents = (c: bigint) => new Money(c.toString()).dividedBy(100);
/** `value` as QuickBooks would send it: every decimal written as a bare JSON number, then parsed. */
function json(value: unknown): unknown {
  const mark = (v: unknown): unknown =>
    Decimal.isDecimal(v) ? `#${v.toFixed()}#` : Array.isArray(v) ? v.map(mark) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mark(x)])) : v;
  return JSON.parse(JSON.stringify(mark(value)).replace(/"#(-?[\d.]+)#"/g, '$1')) as unknown;
}

function document(lines: unknown[], extra: Record<string, unknown>) {
  return QboInvoice.parse(
    json({ Id: '1', SyncToken: '0', MetaData: { LastUpdatedTime: '2026-11-18T09:00:00-08:00' }, TxnDate: '2026-11-18', CurrencyRef: { value: 'AUD' }, CustomerRef: { value: '7' }, Line: lines, ...extra }),
  );
}

const RATES = ['0.05', '0.1', '0.15', '0.2'].map((r) => new Money(r));

describe('TaxInclusive documents', () => {
  it('gross unit price × quantity is each line gross, to the cent, and invoice amount − tax is the sum of QBO nets', () => {
    const line = fc.record({
      grossCents: fc.bigInt({ min: 1n, max: 10_000_000_000n }),
      qty: fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 99_999 }).map((q) => q / 100)),
      rate: fc.constantFrom(...RATES),
    });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 5 }), (generated) => {
        const rows = generated.map(({ grossCents, qty, rate }) => {
          const gross = cents(grossCents);
          const net = roundMoney(gross.dividedBy(rate.plus(1)), 2);
          const unit = roundMoney(net.dividedBy(qty), 7);
          return { gross, net, line: { Amount: net, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { UnitPrice: unit, Qty: qty, TaxInclusiveAmt: gross, TaxCodeRef: { value: '10' } } } };
        });
        const tax = rows.reduce((t, r) => t.plus(r.gross).minus(r.net), new Money(0));
        const total = rows.reduce((t, r) => t.plus(r.gross), new Money(0));
        const event = only(mapQuickBooksInvoice(document(rows.map((r) => r.line), { GlobalTaxCalculation: 'TaxInclusive', TxnTaxDetail: { TotalTax: tax }, TotalAmt: total }), { source: 'quickbooks' }));
        const data = InvoiceData.parse(event.data);
        data.lines.forEach((l, i) => {
          expect(roundMoney(l.unit_price.times(l.quantity), 2).equals(rows[i]!.gross)).toBe(true);
          expect(l.tax_amount!.equals(rows[i]!.gross.minus(rows[i]!.net))).toBe(true);
        });
        const nets = rows.reduce((t, r) => t.plus(r.net), new Money(0));
        expect(invoiceAmount(data).minus(data.tax_total!).equals(nets)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('tax-exclusive documents', () => {
  it('every line is charged exactly its QBO Amount, whatever UnitPrice and Qty say', () => {
    const line = fc.record({
      unit: fc.integer({ min: 0, max: 99_999_999 }).map((u) => new Money(u).dividedBy(10_000)),
      qty: fc.integer({ min: 0, max: 99_999 }).map((q) => new Money(q).dividedBy(100)),
      // QBO's own Amount most of the time; now and then one that UnitPrice × Qty does not give.
      drift: fc.oneof(fc.constant(0n), fc.bigInt({ min: -500n, max: 500n })),
    });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 5 }), (generated) => {
        const amounts = generated.map(({ unit, qty, drift }) => roundMoney(unit.times(qty), 2).plus(cents(drift)));
        const lines = generated.map(({ unit, qty }, i) => ({ Amount: amounts[i], DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { UnitPrice: unit, Qty: qty, TaxCodeRef: { value: 'TAX' } } }));
        const event = only(mapQuickBooksInvoice(document(lines, { TxnTaxDetail: { TotalTax: 0 } }), { source: 'quickbooks' }));
        InvoiceData.parse(event.data).lines.forEach((l, i) => {
          const charged = roundMoney(l.unit_price.times(l.quantity), 2).minus(l.discount ?? 0);
          expect(charged.equals(amounts[i]!)).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('JSON numbers', () => {
  it('a QBO amount of up to 15 significant digits reads back as the decimal QuickBooks wrote', () => {
    const literal = fc
      .record({ whole: fc.bigInt({ min: 0n, max: 99_999_999n }), fraction: fc.bigInt({ min: 0n, max: 9_999_999n }), places: fc.integer({ min: 0, max: 7 }), negative: fc.boolean() })
      .map(({ whole, fraction, places, negative }) => `${negative ? '-' : ''}${whole}${places === 0 ? '' : `.${fraction.toString().padStart(7, '0').slice(0, places)}`}`);
    fc.assert(
      fc.property(literal, (text) => {
        expect(QboAmount.parse(JSON.parse(text)).equals(new Money(text))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
