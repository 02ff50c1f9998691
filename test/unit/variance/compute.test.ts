import { describe, expect, it } from 'vitest';
import { InvoiceData } from '../../../src/domain/events.js';
import { DEFAULT_VARIANCE_THRESHOLDS, chargedTax, taxVariance, varianceThresholds } from '../../../src/variance/compute.js';

const invoice = (extra: Record<string, unknown>, currency = 'USD') =>
  InvoiceData.parse({
    issued_at: '2026-11-20T10:00:00Z',
    status: 'paid',
    currency,
    tax_inclusive: false,
    lines: [{ unit_price: '100.00', quantity: '1', tax_amount: '8.00' }, { unit_price: '50.00', quantity: '1', tax_amount: '4.00' }],
    shipping: { amount: '10.00', tax_amount: '0.88' },
    ...extra,
  });

describe('charged-vs-calculated tax (pure)', () => {
  it('charged: tax_total when stated, else lines and shipping', () => {
    expect(chargedTax(invoice({ tax_total: '12.88' }))?.toFixed()).toBe('12.88');
    expect(chargedTax(invoice({}))?.toFixed()).toBe('12.88');
    expect(chargedTax(InvoiceData.parse({ issued_at: '2026-11-20T10:00:00Z', status: 'paid', currency: 'USD', tax_inclusive: false, lines: [{ unit_price: '1', quantity: '1' }] }))).toBeUndefined();
  });

  it('records only above both thresholds (0.05 and 0.5 % by default)', () => {
    // 12.88 charged, 12.85 computed: 0.03, under the absolute threshold.
    expect(taxVariance(invoice({}), '12.85', DEFAULT_VARIANCE_THRESHOLDS)).toBeUndefined();
    // 0.06 off on 12.82: above 0.05 and 0.47 %: still under 0.5 %.
    expect(taxVariance(invoice({}), '12.82', DEFAULT_VARIANCE_THRESHOLDS)).toBeUndefined();
    // 0.10 off on 12.78: 0.78 %.
    expect(taxVariance(invoice({}), '12.78', DEFAULT_VARIANCE_THRESHOLDS)).toEqual({ currency: 'USD', charged: '12.88', computed: '12.78', difference: '0.10', percent: '0.78' });
    // The engine computed none: any difference above the absolute threshold is a variance.
    expect(taxVariance(invoice({}), '0.000000', DEFAULT_VARIANCE_THRESHOLDS)).toMatchObject({ difference: '12.88', percent: null });
  });

  it('uses the currency minor unit and the configured thresholds', () => {
    const jpy = invoice({ tax_total: '1000' }, 'JPY');
    expect(taxVariance(jpy, '990', varianceThresholds({ abs: '5', pct: '0.5' }))).toMatchObject({ charged: '1000', computed: '990', difference: '10', percent: '1.01' });
    expect(taxVariance(jpy, '990', varianceThresholds({ abs: '20', pct: '0' }))).toBeUndefined();
  });
});
