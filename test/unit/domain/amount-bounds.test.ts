import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { AMOUNT_MAX_DECIMALS, AMOUNT_MAX_INTEGER_DIGITS, Money, amountProblem } from '../../../src/domain/money.js';
import { CanonicalEvent } from '../../../src/domain/events.js';

/** An amount written out as text: its digits before and after the point are counted from the text itself. */
const amountText = fc
  .record({
    negative: fc.boolean(),
    // Leading digit 1-9 (or a lone 0), so the integer part's digit count is its length.
    integer: fc.oneof(fc.constant('0'), fc.tuple(fc.integer({ min: 1, max: 9 }), fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 24 })).map(([d, rest]) => `${d}${rest}`)),
    // Trailing digit 1-9, so the decimal count is the fraction's length.
    fraction: fc.oneof(fc.constant(''), fc.tuple(fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 19 }), fc.integer({ min: 1, max: 9 })).map(([rest, d]) => `${rest}${d}`)),
  })
  .map(({ negative, integer, fraction }) => ({
    text: `${negative ? '-' : ''}${integer}${fraction ? `.${fraction}` : ''}`,
    integerDigits: integer === '0' ? 0 : integer.length,
    decimals: fraction.length,
  }));

describe('amount bounds', () => {
  it(`accepts exactly the amounts with at most ${AMOUNT_MAX_INTEGER_DIGITS} digits before the point and ${AMOUNT_MAX_DECIMALS} after`, () => {
    fc.assert(
      fc.property(amountText, ({ text, integerDigits, decimals }) => {
        const problem = amountProblem(new Money(text));
        const fits = integerDigits <= AMOUNT_MAX_INTEGER_DIGITS && decimals <= AMOUNT_MAX_DECIMALS;
        expect(problem === undefined, `${text}: ${problem}`).toBe(fits);
        if (decimals > AMOUNT_MAX_DECIMALS) expect(problem).toContain(`(${decimals})`);
        else if (integerDigits > AMOUNT_MAX_INTEGER_DIGITS) expect(problem).toContain(`(${integerDigits})`);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps a Money amount of an event as it is and converts any other decimal (another decimal.js constructor too) to Money', () => {
    const event = (amount: unknown) =>
      CanonicalEvent.parse({
        id: 'e1',
        type: 'refund.created',
        occurred_at: '2026-11-20T10:00:00Z',
        connector: 'erp',
        record: { kind: 'transaction', source: 'api', external_id: 'R-1' },
        data: { issued_at: '2026-11-20T10:00:00Z', currency: 'USD', amount },
      });
    const money = new Money('12.50');
    const kept = event(money);
    expect(kept.type === 'refund.created' && kept.data.amount).toBe(money);
    const fromOtherDecimal = event(new Decimal('0.00000001'));
    expect(fromOtherDecimal.type === 'refund.created' && fromOtherDecimal.data.amount.constructor).toBe(Money);
    expect(JSON.stringify(fromOtherDecimal.type === 'refund.created' && fromOtherDecimal.data.amount)).toBe('"0.00000001"');
    const fromText = event('0.0000001');
    expect(fromText.type === 'refund.created' && fromText.data.amount instanceof Money).toBe(true);
    expect(JSON.stringify(fromText.type === 'refund.created' && fromText.data.amount)).toBe('"0.0000001"');
  });
});
