import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { TransactionRequest } from '../../../src/api/schemas/tax-engine.js';
import type { InvoiceData, RefundData } from '../../../src/domain/events.js';
import { Money, formatDecimal, type Decimal } from '../../../src/domain/money.js';
import { mapRefund, mapRefundCancelled, type RefundContext } from '../../../src/mapping/refund.js';
import { exactFraction, type OriginalTransaction } from '../../../src/mapping/refund-fraction.js';
import { DOC_INVOICE, DOC_SETTINGS, ctx, invalidFields, invoiceData, refundData, sent } from './helpers.js';

const ORIGINAL_ID = '8f2b7a7e-4c1d-4f5e-9a3b-2c1d0e9f8a7b';
const PCT = 'refund_info.refund_linked_percentage';

const refundCtx = (original: Omit<OriginalTransaction, 'id'> | undefined, alreadyRefunded = '0', settings = {}): RefundContext => ({
  ...ctx('transaction', 'refund-1', settings),
  ...(original === undefined ? {} : { original: { id: ORIGINAL_ID, ...original } }),
  alreadyRefunded: new Money(alreadyRefunded),
});

const linkedRefund = (wire: Partial<z.input<typeof RefundData>>) => refundData({ invoice_external_id: 'INV-1', ...wire });

/** The fraction a refund gets: the body's string, and that the returned Decimal is the same value. */
function fractionOf(invoice: InvoiceData, refund: RefundData, alreadyRefunded = '0'): string {
  const result = mapRefund(refund, refundCtx({ invoice }, alreadyRefunded));
  const body = sent(result);
  if (result.kind !== 'send') throw new Error('unreachable');
  expect(formatDecimal(result.fraction)).toBe(body.refund_info?.refund_linked_percentage);
  return body.refund_info?.refund_linked_percentage ?? '';
}

describe('mapRefund: the refund fraction is exact', () => {
  const usd100 = invoiceData({ lines: [{ unit_price: '30', quantity: '3' }], shipping: { amount: '10' } });
  const usd90 = invoiceData({ lines: [{ unit_price: '30', quantity: '3' }] });

  it.each([
    { case: 'half: 50 ÷ 100', invoice: usd100, refund: { amount: '50' }, fraction: '0.5' },
    { case: 'whole: 100 ÷ 100', invoice: usd100, refund: { amount: '100.00' }, fraction: '1' },
    { case: 'a third: 30 ÷ 90, rounded down to 10 places', invoice: usd90, refund: { amount: '30' }, fraction: '0.3333333333' },
    { case: 'two thirds: 60 ÷ 90, rounded down (not half-even)', invoice: usd90, refund: { amount: '60' }, fraction: '0.6666666666' },
    { case: 'shipping included: (50 items + 10 shipping) ÷ (90 + 10)', invoice: usd100, refund: { amount: '60', shipping_amount: '10' }, fraction: '0.6' },
    {
      case: 'after discounts: 25 ÷ (50 × 2 − 10 line discount − 40 invoice discount + (8 − 8) shipping)',
      invoice: invoiceData({ lines: [{ unit_price: '50', quantity: '2', discount: '10' }], discount: '40', shipping: { amount: '8', discount: '8' } }),
      refund: { amount: '25' },
      fraction: '0.5',
    },
    {
      case: 'JPY: 1000 ÷ 3000',
      invoice: invoiceData({ currency: 'JPY', lines: [{ unit_price: '1000', quantity: '3' }] }),
      refund: { currency: 'JPY', amount: '1000' },
      fraction: '0.3333333333',
    },
    {
      case: 'KWD: 0.625 ÷ 2.500',
      invoice: invoiceData({ currency: 'KWD', lines: [{ unit_price: '1.250', quantity: '2' }] }),
      refund: { currency: 'KWD', amount: '0.625' },
      fraction: '0.25',
    },
    {
      case: 'USD half-cent: 0.19 ÷ round(0.125 × 3 = 0.375) = 0.19 ÷ 0.38',
      invoice: invoiceData({ lines: [{ unit_price: '0.125', quantity: '3' }] }),
      refund: { amount: '0.19' },
      fraction: '0.5',
    },
    {
      case: 'negative credit line: 20 ÷ (50 × 2 − 20)',
      invoice: invoiceData({ lines: [{ unit_price: '50', quantity: '2' }, { unit_price: '-20', quantity: '1' }] }),
      refund: { amount: '20' },
      fraction: '0.25',
    },
    {
      case: 'tax-inclusive, refund tax known: (50 + 9.50) ÷ 119 gross',
      invoice: invoiceData({ tax_inclusive: true, lines: [{ unit_price: '119', quantity: '1' }], tax_total: '19' }),
      refund: { amount: '50', tax_amount: '9.50' },
      fraction: '0.5',
    },
    {
      case: 'tax-inclusive, refund tax unknown: 50 ÷ (119 − 19 invoice tax)',
      invoice: invoiceData({ tax_inclusive: true, lines: [{ unit_price: '119', quantity: '1' }], tax_total: '19' }),
      refund: { amount: '50' },
      fraction: '0.5',
    },
    {
      case: 'tax-inclusive with shipping: (110 + 20.90) ÷ (119 + 11.90)',
      invoice: invoiceData({ tax_inclusive: true, lines: [{ unit_price: '119', quantity: '1' }], shipping: { amount: '11.90' } }),
      refund: { amount: '110', shipping_amount: '10', tax_amount: '20.90' },
      fraction: '1',
    },
    {
      case: 'the documented example: 75 ÷ 154.90 = 750/1549, rounded down',
      invoice: invoiceData({
        currency: 'EUR',
        lines: [{ unit_price: '10.50', quantity: '3', discount: '1.50' }, { unit_price: '120', quantity: '1' }],
        shipping: { amount: '4.90' },
      }),
      refund: { currency: 'EUR', amount: '75.00', tax_amount: '14.25' },
      fraction: '0.484183344',
    },
  ])('$case', ({ invoice, refund, fraction }) => {
    expect(fractionOf(invoice, linkedRefund(refund))).toBe(fraction);
  });

  it.each([
    { case: "the engine's final amount", original: { amounts: { final_transaction_amount: '200.00' } }, refund: { amount: '50' }, fraction: '0.25' },
    {
      case: "the engine's items amount when there is no final amount",
      original: { amounts: { total_items_amount: '40.00' } },
      refund: { amount: '10' },
      fraction: '0.25',
    },
    {
      case: "a tax-inclusive original's gross less its tax",
      original: { amounts: { final_transaction_amount: '119.00' }, is_tax_inclusive: true, total_tax: '19.00' },
      refund: { amount: '50' },
      fraction: '0.5',
    },
    {
      case: "a tax-inclusive original's gross, with the refund's tax",
      original: { amounts: { final_transaction_amount: '119.00' }, is_tax_inclusive: true },
      refund: { amount: '50', tax_amount: '9.50' },
      fraction: '0.5',
    },
  ])('falls back on $case when taxsync has no canonical invoice', ({ original, refund, fraction }) => {
    const body = sent(mapRefund(linkedRefund(refund), refundCtx(original)));
    expect(body.refund_info).toEqual({ is_refund_linked: true, refund_linked_percentage: fraction });
  });

  it('lets refunds of exact sixths add up to exactly 1 without tripping the cumulative check', () => {
    const invoice = invoiceData({ lines: [{ unit_price: '100', quantity: '6' }] });
    let already: Decimal = new Money(0);
    for (let i = 0; i < 6; i += 1) {
      const result = mapRefund(linkedRefund({ amount: '100' }), refundCtx({ invoice }, formatDecimal(already)));
      expect(result.kind).toBe('send');
      if (result.kind === 'send') already = already.plus(result.fraction);
    }
    // 6 × 0.1666666666; half-even would give 6 × 0.1666666667 = 1.0000000002 and refuse the sixth.
    expect(formatDecimal(already)).toBe('0.9999999996');
  });

  it('computes terminating fractions exactly however long they are', () => {
    expect(formatDecimal(exactFraction(new Money('1'), new Money('1024')).value)).toBe('0.0009765625');
    expect(exactFraction(new Money('1'), new Money('1024')).exact).toBe(true);
    expect(formatDecimal(exactFraction(new Money('2'), new Money('3')).value)).toBe('0.6666666666');
    expect(exactFraction(new Money('2'), new Money('3')).exact).toBe(false);
    expect(formatDecimal(exactFraction(new Money('0.07'), new Money('0.21')).value)).toBe('0.3333333333');
  });
});

describe('mapRefund: refunds never add up past the whole invoice', () => {
  const invoice = invoiceData({ lines: [{ unit_price: '100', quantity: '1' }] });

  it('refuses a refund larger than its invoice', () => {
    const result = mapRefund(linkedRefund({ amount: '120' }), refundCtx({ invoice }));
    expect(invalidFields(result)[PCT]).toEqual([
      'refund refund-1 exceeds its invoice INV-1: refund amount 120 ÷ invoice amount after discounts, shipping included 100 (excluding tax) = 1.2, more than the whole (1)',
    ]);
  });

  it('refuses a refund that takes the invoice past 1 together with the others, naming both', () => {
    const fields = invalidFields(mapRefund(linkedRefund({ amount: '50' }), refundCtx({ invoice }, '0.6')));
    expect(fields[PCT]).toEqual([
      'refund refund-1 takes 0.5 of invoice INV-1, whose other refunds already took 0.6: together 1.1, more than the whole invoice (1)',
    ]);
  });

  it('accepts the refund that completes the invoice exactly', () => {
    expect(sent(mapRefund(linkedRefund({ amount: '50' }), refundCtx({ invoice }, '0.5'))).refund_info?.refund_linked_percentage).toBe('0.5');
  });

  it.each([
    { case: 'a zero refund', amount: '0', message: /no positive share/ },
    { case: 'a negative refund', amount: '-5', message: /no positive share/ },
  ])('refuses $case', ({ amount, message }) => {
    expect(invalidFields(mapRefund(linkedRefund({ amount }), refundCtx({ invoice })))[PCT]).toEqual([expect.stringMatching(message)]);
  });

  it('refuses a refund of an invoice that amounts to nothing', () => {
    const free = invoiceData({ lines: [{ unit_price: '0', quantity: '1' }] });
    expect(invalidFields(mapRefund(linkedRefund({ amount: '5' }), refundCtx({ invoice: free })))[PCT]).toEqual([
      expect.stringMatching(/amounts to 0 .* positive amount/),
    ]);
  });

  it('refuses a refund in another currency than its invoice', () => {
    expect(invalidFields(mapRefund(linkedRefund({ currency: 'EUR', amount: '5' }), refundCtx({ invoice })))['currency_details.currency']).toEqual([
      'the refund is in EUR but its invoice is in USD',
    ]);
  });

  it('refuses a refund of a tax-inclusive invoice when no tax is known on either side', () => {
    const gross = invoiceData({ tax_inclusive: true, lines: [{ unit_price: '119', quantity: '1' }] });
    expect(invalidFields(mapRefund(linkedRefund({ amount: '50' }), refundCtx({ invoice: gross })))[PCT]).toEqual([
      expect.stringMatching(/prices include tax, but neither/),
    ]);
  });

  it('refuses when neither the invoice nor its engine amounts are known', () => {
    expect(invalidFields(mapRefund(linkedRefund({ amount: '5' }), refundCtx({})))[PCT]).toEqual([expect.stringMatching(/cannot be computed/)]);
  });
});

describe('mapRefund: linked refunds', () => {
  it('waits while its invoice is not in the tax engine', () => {
    const result = mapRefund(linkedRefund({ amount: '5' }), refundCtx(undefined));
    expect(result).toEqual({ kind: 'wait', reason: 'refund refund-1 waits for its invoice INV-1 (source api) to exist in the tax engine' });
  });

  it('maps the documented example field by field (docs/mapping.md, "Linked refund")', () => {
    const invoice = invoiceData(DOC_INVOICE);
    const refund = refundData({
      invoice_external_id: 'INV-2026-0815',
      number: 'CN-2026-0042',
      issued_at: '2026-11-20T09:52:00Z',
      currency: 'EUR',
      amount: '74.95',
      tax_amount: '14.24',
    });
    const context = { ...refundCtx({ invoice }, '0', DOC_SETTINGS), key: { kind: 'transaction' as const, source: 'api', external_id: 'refund-CN-2026-0042' } };
    const result = mapRefund(refund, context);
    expect(sent(result)).toEqual({
      source: 'api',
      external_id: 'refund-CN-2026-0042',
      transaction_type: 'refund',
      transaction_status: 'active',
      document_name: 'CN-2026-0042',
      transaction_date: '2026-11-20T09:52:00Z',
      currency_details: { currency: 'EUR' },
      is_tax_inclusive: false,
      created_from: ORIGINAL_ID,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' },
      addresses: {
        billing: { city: 'Berlin', zip: '10115', country: 'DE' },
        shipping: { street: 'Unter den Linden 1', city: 'Berlin', country: 'DE' },
      },
      customer_details: { customer: { external_id: 'C-2001', source: 'api', name: 'Contoso GmbH', external_created_at: '2026-01-05T08:00:00Z' } },
      // No lines: one item at the refund's net amount 74.95 (never items: []).
      items: [{ name: 'Refund', unit_price: '74.95', quantity: '1' }],
    } satisfies TransactionRequest);
    expect(result.kind === 'send' && result.notes).toEqual([
      'refund_linked_percentage 0.5 = refund amount 74.95 ÷ invoice amount after discounts, shipping included 149.9 (excluding tax)',
    ]);
  });

  it('rounds the documented non-terminating example down to 10 places: 50 ÷ 149.90 = 0.33355570380253…', () => {
    expect(fractionOf(invoiceData(DOC_INVOICE), linkedRefund({ currency: 'EUR', amount: '50' }))).toBe('0.3335557038');
  });

  it('maps the documented tax-inclusive example: (30 + 5.70) ÷ 119 = 0.3', () => {
    const invoice = invoiceData({ currency: 'EUR', tax_inclusive: true, lines: [{ unit_price: '119.00', quantity: '1' }], tax_total: '19.00' });
    expect(fractionOf(invoice, linkedRefund({ currency: 'EUR', amount: '30.00', tax_amount: '5.70' }))).toBe('0.3');
    expect(fractionOf(invoice, linkedRefund({ currency: 'EUR', amount: '30.00' }))).toBe('0.3');
  });

  it("sends the refunded lines as items when the source gives them, with the settings' tax codes", () => {
    const invoice = invoiceData({ lines: [{ unit_price: '20', quantity: '5' }] });
    const refund = linkedRefund({ amount: '40', lines: [{ sku: 'A', unit_price: '20', quantity: '2' }] });
    const body = sent(mapRefund(refund, refundCtx({ invoice }, '0', { tax_codes: { by_sku: { A: 'P-A' } } })));
    expect(body.items).toEqual([{ name: 'A', tax_code: 'P-A', unit_price: '20', quantity: '2' }]);
    expect(body).not.toHaveProperty('shipping_fee');
    expect(body.refund_info?.refund_linked_percentage).toBe('0.4');
  });

  it("uses the refund's own customer and addresses over the invoice's", () => {
    const invoice = invoiceData({ customer: { external_id: 'C-1' }, addresses: { billing: { city: 'Austin' } } });
    const refund = linkedRefund({ amount: '5', customer: { external_id: 'C-2' }, addresses: { shipping: { city: 'Dallas' } } });
    const body = sent(mapRefund(refund, refundCtx({ invoice }, '0', { shipping_from: { city: 'Houston' } })));
    expect(body.customer_details).toEqual({ customer: { external_id: 'C-2', source: 'api' } });
    expect(body.addresses).toEqual({ shipping: { city: 'Dallas' }, shipping_from: { city: 'Houston' } });
  });

  it('never sends lineAmount on refund items', () => {
    const body = sent(mapRefund(linkedRefund({ amount: '5', lines: [{ unit_price: '5', quantity: '1' }] }), refundCtx({ invoice: invoiceData() })));
    expect(Object.keys(body.items?.[0] ?? {})).not.toContain('lineAmount');
  });
});

describe('mapRefund: tax-inclusive invoices compare net amounts (issue 14, item 4)', () => {
  // The TWD order of test/fixtures/connectors/shopify/real-orders-updated-taxes-included-twd.json:
  // 1890.00 (tax 90.00) + 2990.00 (tax 142.38) + shipping 80.00 (tax 3.81) = 4960.00 gross, tax 236.19.
  const twd = () =>
    invoiceData({
      currency: 'TWD',
      tax_inclusive: true,
      lines: [
        { unit_price: '1890.00', quantity: '1' },
        { unit_price: '2990.00', quantity: '1' },
      ],
      shipping: { amount: '80.00' },
      tax_total: '236.19',
    });

  it('takes 1800 ÷ 4723.81 = 0.3810… of the order for a refund priced like it, not (1890 + 90) ÷ 4960 = 0.3992', () => {
    // Shopify reports the refunded subtotal in the order's pricing: 1890.00 with its tax 90.00 inside.
    // net 1890 − 90 = 1800; order net 4960 − 236.19 = 4723.81; 180000/472381 = 0.38104834868… → down to 10 places.
    const refund = linkedRefund({ currency: 'TWD', amount: '1890.00', tax_amount: '90.00', priced_as_invoice: true });
    expect(fractionOf(twd(), refund)).toBe('0.3810483486');
  });

  it('takes a net amount as it is: 1800 ÷ 4723.81 again', () => {
    expect(fractionOf(twd(), linkedRefund({ currency: 'TWD', amount: '1800.00', tax_amount: '90.00' }))).toBe('0.3810483486');
    expect(fractionOf(twd(), linkedRefund({ currency: 'TWD', amount: '1800.00' }))).toBe('0.3810483486');
  });

  it('refuses a refund priced like its tax-inclusive invoice that states no tax', () => {
    const result = mapRefund(linkedRefund({ currency: 'TWD', amount: '1890.00', priced_as_invoice: true }), refundCtx({ invoice: twd() }));
    expect(invalidFields(result)[PCT]?.[0]).toMatch(/states no tax_amount/);
  });

  it('compares gross with gross only when the invoice tax is unknown: (1800 + 90) ÷ 4960 = 0.38104838…', () => {
    const { tax_total: _t, ...noTax } = twd();
    expect(fractionOf(noTax as InvoiceData, linkedRefund({ currency: 'TWD', amount: '1800.00', tax_amount: '90.00' }))).toBe('0.381048387'); // 1890 ÷ 4960 = 0.38104838709… → 0.3810483870
  });
});

describe('mapRefund: amount-only linked refunds (issue 14, item 6)', () => {
  it('sends one "Refund" item at the net amount, never no items', () => {
    const invoice = invoiceData({ lines: [{ unit_price: '20', quantity: '5' }] });
    const body = sent(mapRefund(linkedRefund({ amount: '40', reason: 'goodwill' }), refundCtx({ invoice }, '0', { tax_codes: { default: 'P0000000' } })));
    expect(body.items).toEqual([{ name: 'Refund', description: 'goodwill', tax_code: 'P0000000', unit_price: '40', quantity: '1' }]);
    expect(body.refund_info?.refund_linked_percentage).toBe('0.4'); // 40 ÷ 100
  });

  it('nets the tax out of a refund priced like its tax-inclusive invoice and sends it tax-exclusive', () => {
    // invoice 119.00 gross, tax 19.00; refund 35.70 gross with tax 5.70 → net 30.00; 30 ÷ 100 = 0.3
    const invoice = invoiceData({ currency: 'EUR', tax_inclusive: true, lines: [{ unit_price: '119.00', quantity: '1' }], tax_total: '19.00' });
    const body = sent(mapRefund(linkedRefund({ currency: 'EUR', amount: '35.70', tax_amount: '5.70', priced_as_invoice: true }), refundCtx({ invoice })));
    expect(body.items).toEqual([{ name: 'Refund', unit_price: '30', quantity: '1' }]);
    expect(body.is_tax_inclusive).toBe(false);
    expect(body.refund_info?.refund_linked_percentage).toBe('0.3');
  });
});

describe('mapRefund: unlinked refunds', () => {
  it('sends one "Refund" item at the amount when there are no lines', () => {
    const result = mapRefund(refundData({ number: 'CR-9', amount: '12.34', reason: 'goodwill' }), refundCtx(undefined, '0', { tax_codes: { default: 'P0' } }));
    expect(sent(result)).toEqual({
      source: 'api',
      external_id: 'refund-1',
      transaction_type: 'refund',
      transaction_status: 'active',
      document_name: 'CR-9',
      transaction_date: '2026-11-21T09:00:00Z',
      currency_details: { currency: 'USD' },
      is_tax_inclusive: false,
      refund_info: { is_refund_linked: false },
      items: [{ name: 'Refund', description: 'goodwill', tax_code: 'P0', unit_price: '12.34', quantity: '1' }],
      shipping_fee: null,
    } satisfies TransactionRequest);
    expect(result.kind === 'send' && formatDecimal(result.fraction)).toBe('0');
  });

  it('sends its lines and its shipping part when it has lines', () => {
    const refund = refundData({ amount: '25', shipping_amount: '5', lines: [{ unit_price: '10', quantity: '2' }] });
    const body = sent(mapRefund(refund, refundCtx(undefined, '0', { tax_codes: { shipping: 'FR' } })));
    expect(body.items).toEqual([{ unit_price: '10', quantity: '2' }]);
    expect(body.shipping_fee).toEqual({ amount: '5', tax_code: 'FR' });
  });

  it('falls back to one item when gross lines would meet a net shipping part', () => {
    const refund = refundData({ amount: '25', shipping_amount: '5', tax_inclusive: true, lines: [{ unit_price: '11.90', quantity: '2' }] });
    const result = mapRefund(refund, refundCtx(undefined));
    expect(sent(result).items).toEqual([{ name: 'Refund', unit_price: '25', quantity: '1' }]);
    expect(result.kind === 'send' && result.notes?.[0]).toMatch(/lines not sent/);
  });

  it('refuses an unlinked refund of nothing', () => {
    expect(invalidFields(mapRefund(refundData({ amount: '0' }), refundCtx(undefined)))['data.amount']).toBeDefined();
  });
});

describe('mapRefundCancelled', () => {
  const invoice = invoiceData({ lines: [{ unit_price: '100', quantity: '1' }] });
  const previous = linkedRefund({ amount: '50', number: 'CN-1' });

  it('upserts the previous refund cancelled, keeping its fraction, without the cumulative check', () => {
    const result = mapRefundCancelled({}, { ...refundCtx({ invoice }, '0.9'), previous });
    const body = sent(result);
    expect(body.transaction_status).toBe('cancelled');
    expect(body.refund_info).toEqual({ is_refund_linked: true, refund_linked_percentage: '0.5' });
    expect(body.document_name).toBe('CN-1');
    expect(result.kind === 'send' && formatDecimal(result.fraction)).toBe('0.5');
  });

  it('lets the fields the cancellation states win', () => {
    const body = sent(mapRefundCancelled({ number: 'CN-1-VOID' }, { ...refundCtx({ invoice }), previous }));
    expect(body.document_name).toBe('CN-1-VOID');
  });

  it('ignores the cancellation of a refund taxsync never held', () => {
    expect(mapRefundCancelled(previous, refundCtx({ invoice })).kind).toBe('ignore');
  });

  it('cancels an unlinked refund too', () => {
    const body = sent(mapRefundCancelled({}, { ...refundCtx(undefined), previous: refundData({ amount: '7' }) }));
    expect(body.transaction_status).toBe('cancelled');
    expect(body.refund_info).toEqual({ is_refund_linked: false });
  });
});
