import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineDiscount } from '../../../../src/connectors/xero/lines.js';
import { XeroLineItem } from '../../../../src/connectors/xero/schemas.js';
import { Money } from '../../../../src/domain/money.js';

/**
 * Line discounts over many generated lines (fast-check). Xero is simulated here in integer
 * arithmetic (BigInt, never decimal.js or a float): LineAmount = Quantity × UnitAmount ×
 * (100 − DiscountRate) ÷ 100, rounded half-up to cents, as Xero's LineItem documentation gives it.
 */

/** n units of 10^-scale as a decimal string (1995n, 2 → "19.95"). */
function decimal(n: bigint, scale: number): string {
  const digits = n.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/** n (at `from` decimals, n ≥ 0) rounded half-up to `to` decimals, as an integer at `to` decimals. */
function roundHalfUp(n: bigint, from: number, to: number): bigint {
  if (from <= to) return n * 10n ** BigInt(to - from);
  const unit = 10n ** BigInt(from - to);
  return (n + unit / 2n) / unit;
}

const line = fc.record({
  q: fc.bigInt({ min: 0n, max: 99_999n }),
  qs: fc.integer({ min: 0, max: 4 }),
  u: fc.bigInt({ min: 0n, max: 9_999_999n }),
  us: fc.constantFrom(2, 4),
  /** DiscountRate in hundredths of a percent: 0.01% to 100%. */
  r: fc.bigInt({ min: 1n, max: 10_000n }),
});

/** The line as Xero's JSON carries it: numbers, parsed by the schema as the fetch would. */
const xeroLine = (fields: Record<string, string>) => XeroLineItem.parse(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, JSON.parse(v) as number])));

describe('lineDiscount', () => {
  it('makes the engine\'s line amount (unit × quantity rounded to cents, less the discount) exactly Xero\'s LineAmount', () => {
    fc.assert(
      fc.property(line, ({ q, qs, u, us, r }) => {
        const grossScale = qs + us;
        const lineAmountCents = roundHalfUp(q * u * (10_000n - r), grossScale + 4, 2);
        const item = xeroLine({ Quantity: decimal(q, qs), UnitAmount: decimal(u, us), DiscountRate: decimal(r, 2), LineAmount: decimal(lineAmountCents, 2) });
        const result = lineDiscount(item, 'NZD');
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        const expectedCents = roundHalfUp(q * u, grossScale, 2) - lineAmountCents;
        if (expectedCents === 0n) expect(result.value).toBeUndefined();
        else expect(result.value!.equals(new Money(decimal(expectedCents, 2)))).toBe(true);
        const discount = result.value ?? new Money(0);
        expect(discount.decimalPlaces()).toBeLessThanOrEqual(2);
        const charged = new Money(decimal(q, qs)).times(decimal(u, us)).toDecimalPlaces(2, Money.ROUND_HALF_UP);
        expect(charged.minus(discount).equals(new Money(decimal(lineAmountCents, 2)))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('without LineAmount, is Quantity × UnitAmount × DiscountRate ÷ 100 exactly, however many decimals that has', () => {
    fc.assert(
      fc.property(line, ({ q, qs, u, us, r }) => {
        const item = xeroLine({ Quantity: decimal(q, qs), UnitAmount: decimal(u, us), DiscountRate: decimal(r, 2) });
        const result = lineDiscount(item, 'NZD');
        // rate in hundredths of a percent: ÷ 100 (hundredths) ÷ 100 (percent) = 4 more decimals.
        const exact = new Money(decimal(q * u * r, qs + us + 4));
        const charged = new Money(decimal(roundHalfUp(q * u, qs + us, 2), 2));
        // The engine refuses a discount above the line's amount rounded to cents (0.0001 × 1 rounds to 0).
        expect(result.ok).toBe(!exact.greaterThan(charged));
        if (!result.ok) return;
        if (exact.isZero()) expect(result.value).toBeUndefined();
        else expect(result.value!.equals(exact)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('a DiscountAmount is taken from LineAmount too: 19.95 less 1.95 = 18.00', () => {
    const result = lineDiscount(xeroLine({ Quantity: '1', UnitAmount: '19.95', DiscountAmount: '1.95', LineAmount: '18' }), 'NZD');
    expect(result.ok && result.value?.equals(new Money('1.95'))).toBe(true);
  });

  it('a line without DiscountRate or DiscountAmount has no discount, even where Xero rounded differently', () => {
    // 3 × 0.3333 = 0.9999, charged 1.00 by Xero: no discount is invented.
    expect(lineDiscount(xeroLine({ Quantity: '3', UnitAmount: '0.3333', LineAmount: '1' }), 'NZD')).toEqual({ ok: true, value: undefined });
  });

  it('refuses a discount on a line of negative amount, and one larger than the line', () => {
    expect(lineDiscount(xeroLine({ Quantity: '1', UnitAmount: '-60', DiscountRate: '10', LineAmount: '-54' }), 'NZD')).toMatchObject({ ok: false, field: 'LineAmount' });
    expect(lineDiscount(xeroLine({ Quantity: '1', UnitAmount: '10', DiscountAmount: '11' }), 'NZD')).toMatchObject({ ok: false, field: 'DiscountAmount' });
  });
});
