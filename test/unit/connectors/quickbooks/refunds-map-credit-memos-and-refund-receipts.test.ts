import { describe, expect, it } from 'vitest';
import { InvoiceData, RefundData } from '../../../../src/domain/events.js';
import { Money } from '../../../../src/domain/money.js';
import { DEFAULT_MAPPING_SETTINGS, mapRefund } from '../../../../src/mapping/index.js';
import {
  mapQuickBooksCreditMemo,
  mapQuickBooksDeleted,
  mapQuickBooksInvoice,
  mapQuickBooksRefundReceipt,
  quickBooksCreditApplications,
} from '../../../../src/connectors/quickbooks/map.js';
import { QboCreditMemo, QboCreditMemoAnswer, QboInvoiceAnswer, QboPaymentAnswer, QboRefundReceiptAnswer } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, n, only } from './qbo-fixtures.js';

const AU = { source: 'quickbooks', homeCurrency: 'AUD', companyCountry: 'AU' };
const US = { source: 'quickbooks' };
const MEMO_FIXTURE = 'real-creditmemo-au-applied-through-zero-payment.json';

const memoRaw = (apiAnswer(MEMO_FIXTURE, 0) as { CreditMemo: Record<string, unknown> }).CreditMemo;
const memo = (changes: Record<string, unknown> = {}) => QboCreditMemo.parse({ ...structuredClone(memoRaw), ...changes });
const payment = QboPaymentAnswer.parse(apiAnswer(MEMO_FIXTURE, 1)).Payment;
const invoice192 = QboInvoiceAnswer.parse(apiAnswer(MEMO_FIXTURE, 2)).Invoice;

describe('credit memo 231 (TaxInclusive, a quarter of invoice 192)', () => {
  it('from the credit memo alone: an unlinked refund of 1500.00 net, 150.00 tax, with its gross line', () => {
    expect(QboCreditMemoAnswer.parse(apiAnswer(MEMO_FIXTURE, 0)).CreditMemo.Id).toBe('231');
    const event = only(mapQuickBooksCreditMemo(memo(), AU));
    expect(event).toMatchObject({ type: 'refund.created', record: { kind: 'transaction', external_id: 'refund-creditmemo-231' }, version: 0, precedence: 10 });
    // 1650.00 gross − 150.00 GST = 1500.00 net.
    expect(event.data).toMatchObject({ amount: n('1500.00'), tax_amount: n('150.00'), tax_inclusive: true, currency: 'AUD', number: '1026' });
    expect(event.data.invoice_external_id).toBeUndefined();
    expect(event.data.lines).toEqual([expect.objectContaining({ unit_price: n('1650.00'), quantity: n('1'), tax_amount: n('150.00') })]);
  });

  it('with the Payment that applies it: linked to invoice-192, whose share is 1500 ÷ 6000 = 0.25', () => {
    const applied = quickBooksCreditApplications(payment).find((a) => a.creditMemoId === '231')!;
    const event = only(mapQuickBooksCreditMemo(memo(), { ...AU, appliedTo: applied.invoiceIds }));
    expect(event.data.invoice_external_id).toBe('invoice-192');

    // The mapping of docs/mapping.md takes the share net over net: 1500.00 ÷ (6600.00 − 600.00) = 0.25 (gross check 1650 ÷ 6600 = 0.25).
    const invoice = InvoiceData.parse(only(mapQuickBooksInvoice(invoice192, AU)).data);
    const body = mapRefund(RefundData.parse(event.data), {
      key: { kind: 'transaction', source: 'quickbooks', external_id: 'refund-creditmemo-231' },
      settings: DEFAULT_MAPPING_SETTINGS,
      original: { id: '8f2b7a7e-4c1d-4f5e-9a3b-2c1d0e9f8a7b', invoice },
      alreadyRefunded: new Money(0),
    });
    expect(body.kind).toBe('send');
    if (body.kind !== 'send') return;
    expect(body.body.refund_info).toEqual({ is_refund_linked: true, refund_linked_percentage: '0.25' });
    expect(body.fraction.equals(new Money('0.25'))).toBe(true);
  });

  it('invoice 192 after the credit: Balance 6600 − 1650 = 4950 leaves it active, at its next version', () => {
    const event = only(mapQuickBooksInvoice(invoice192, AU));
    expect(event).toMatchObject({ version: 1, data: { status: 'active', total: n('6600') } });
  });

  it('a LinkedTxn naming an invoice on the credit memo itself links it too', () => {
    const event = only(mapQuickBooksCreditMemo(memo({ LinkedTxn: [{ TxnId: '192', TxnType: 'Invoice' }] }), AU));
    expect(event.data.invoice_external_id).toBe('invoice-192');
  });

  it('applied to several invoices it stays unlinked (a refund links one), and a note says why', () => {
    const result = mapQuickBooksCreditMemo(memo(), { ...AU, appliedTo: ['192', '193'] });
    expect(only(result).data.invoice_external_id).toBeUndefined();
    expect(result.kind === 'events' ? result.notes : []).toEqual(['applied to invoice-192, invoice-193: a refund links one invoice, so it is sent unlinked']);
  });

  it('voided: refund.cancelled without the zeroes', () => {
    const voided = memo({
      SyncToken: '2',
      PrivateNote: 'Voided',
      TotalAmt: 0,
      TxnTaxDetail: { TotalTax: 0 },
      Line: [{ Amount: 0, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { Qty: 0, TaxInclusiveAmt: 0 } }],
    });
    const event = only(mapQuickBooksCreditMemo(voided, AU));
    expect(event).toMatchObject({ type: 'refund.cancelled', record: { external_id: 'refund-creditmemo-231' }, version: 2, precedence: 20 });
    expect(event.data).toEqual({ number: '1026', updated_at: '2021-05-03T15:05:40Z' });
  });

  it('a credit memo of 0 (not voided) gives nothing back: ignored with the reason', () => {
    const result = mapQuickBooksCreditMemo(memo({ TotalAmt: 0, TxnTaxDetail: { TotalTax: 0 }, Line: [] }), AU);
    expect(result).toEqual({ kind: 'ignore', reason: 'CreditMemo 231 gives nothing back (TotalAmt 0)' });
  });

  it('deleted: refund.deleted of refund-creditmemo-231', () => {
    const event = only(mapQuickBooksDeleted('CreditMemo', { Id: '231' }, { ...AU, occurredAt: '2021-05-04T10:00:00-07:00' }));
    expect(event).toMatchObject({ type: 'refund.deleted', record: { external_id: 'refund-creditmemo-231' }, occurred_at: '2021-05-04T17:00:00Z', precedence: 30 });
  });
});

describe('refund receipt 247 (US, no invoice)', () => {
  const receipt = QboRefundReceiptAnswer.parse(apiAnswer('real-refundreceipt-us-no-invoice-link.json')).RefundReceipt;

  it('is an unlinked refund of its own lines: 2.5 × 35.00 = 87.50 (NON) + 12.75 (TAX) = 100.25, tax 1.02', () => {
    const event = only(mapQuickBooksRefundReceipt(receipt, US));
    expect(event).toMatchObject({ type: 'refund.created', record: { external_id: 'refund-refundreceipt-247' }, id: 'quickbooks:refundreceipt:247:1795021502000:0' });
    // 101.27 − 1.02 = 100.25 = 87.50 + 12.75.
    expect(event.data).toMatchObject({ amount: n('100.25'), tax_amount: n('1.02'), tax_inclusive: false, number: '1020' });
    expect(event.data.invoice_external_id).toBeUndefined();
    expect(event.data.lines!.map((l) => [l.unit_price, l.quantity, l.taxable])).toEqual([[n('35.00'), n('2.5'), false], [n('12.75'), n('1'), undefined]]);
    expect(event.data.customer).toMatchObject({ external_id: '15', name: "Pye's Cakes", email: 'karen@pye.com' });
  });

  it('with a transaction discount it is sent by its amount alone (a refund carries no discount), with a note', () => {
    const raw = (apiAnswer('real-refundreceipt-us-no-invoice-link.json') as { RefundReceipt: { Line: unknown[] } }).RefundReceipt;
    const discounted = QboRefundReceiptAnswer.shape.RefundReceipt.parse({
      ...structuredClone(raw),
      Line: [...raw.Line, { Amount: 10.03, DetailType: 'DiscountLineDetail', DiscountLineDetail: { PercentBased: true, DiscountPercent: 10 } }],
      TotalAmt: 91.24,
    });
    const result = mapQuickBooksRefundReceipt(discounted, US);
    // 100.25 − 10.03 = 90.22 net (QBO taxed 12.75 before the discount: 1.02); TotalAmt 91.24 − 1.02 = 90.22.
    expect(only(result).data).toMatchObject({ amount: n('90.22'), tax_amount: n('1.02') });
    expect(only(result).data.lines).toBeUndefined();
    expect(result.kind === 'events' ? result.notes : []).toEqual(['RefundReceipt 247 has a discount of 10.03: sent by its amount, without its lines']);
  });
});
