import { Decimal } from 'decimal.js';

/**
 * The one Decimal for money. Precision far above any amount taxsync handles; rounding is always
 * explicit (roundMoney), the default only matters for division, which is never rounded implicitly.
 * toString (and so toJSON) never uses exponent notation, whatever the magnitude: "1e-31" would be
 * refused when the event is read back (DECIMAL_PATTERN) and its job could never run.
 */
export const Money = Decimal.clone({ precision: 50, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -9e15, toExpPos: 9e15 });
export type Money = Decimal;

/**
 * The amounts taxsync accepts (docs/events.md, "Amounts"): at most 18 digits before the decimal
 * point (a quintillion, beyond any invoice) and 15 after it (Stripe's `*_decimal` fields carry 12
 * decimals of a minor unit, 15 in a three-decimal currency). Larger or finer values are refused at
 * ingest with the field named, so they can be edited and replayed, never half-stored.
 */
export const AMOUNT_MAX_INTEGER_DIGITS = 18;
export const AMOUNT_MAX_DECIMALS = 15;

/** Why `value` is outside the supported amounts, or undefined when it is within them. */
export function amountProblem(value: Decimal): string | undefined {
  if (!value.isFinite()) return 'must be a finite decimal';
  if (value.decimalPlaces() > AMOUNT_MAX_DECIMALS) {
    return `has more than ${AMOUNT_MAX_DECIMALS} digits after the decimal point (${value.decimalPlaces()}); taxsync supports at most ${AMOUNT_MAX_DECIMALS}`;
  }
  // Decimal's exponent: a value of at least 1 in magnitude has e + 1 digits before the point.
  const integerDigits = value.isZero() || value.e < 0 ? 0 : value.e + 1;
  if (integerDigits > AMOUNT_MAX_INTEGER_DIGITS) {
    return `has more than ${AMOUNT_MAX_INTEGER_DIGITS} digits before the decimal point (${integerDigits}); taxsync supports at most ${AMOUNT_MAX_INTEGER_DIGITS}`;
  }
  return undefined;
}

/** Accepts "12.50", "-3", "0.125"; rejects numbers, exponents, blanks, NaN and Infinity. */
export const DECIMAL_PATTERN = /^-?\d+(\.\d+)?$/;

export function money(value: string | Decimal): Decimal {
  if (typeof value === 'string') {
    if (!DECIMAL_PATTERN.test(value)) throw new Error(`not a decimal string: ${JSON.stringify(value)}`);
    return new Money(value);
  }
  return new Money(value);
}

/** How an amount is rounded to the currency's minor unit. */
export type Rounding = 'half_up' | 'half_even' | 'down' | 'up';
const ROUNDING: Record<Rounding, Decimal.Rounding> = {
  half_up: Decimal.ROUND_HALF_UP,
  half_even: Decimal.ROUND_HALF_EVEN,
  down: Decimal.ROUND_DOWN,
  up: Decimal.ROUND_UP,
};

export function roundMoney(value: Decimal, decimals: number, rounding: Rounding = 'half_up'): Decimal {
  return new Money(value).toDecimalPlaces(decimals, ROUNDING[rounding]);
}

/** A fixed-point string with exactly `decimals` places ("12.50", "1000", "1.250"). */
export function formatMoney(value: Decimal, decimals: number, rounding: Rounding = 'half_up'): string {
  return roundMoney(value, decimals, rounding).toFixed(decimals);
}

/** A decimal string without trailing zeros or exponent ("0.5", "12", "-0.125"). */
export function formatDecimal(value: Decimal): string {
  const fixed = new Money(value).toFixed();
  return fixed === '-0' ? '0' : fixed;
}

/**
 * ISO 4217 minor-unit exponents that differ from 2. Platforms may use their own (Stripe does:
 * see its connector); this table is the ISO default.
 */
const ISO_EXPONENTS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

export function isoExponent(currency: string): number {
  return ISO_EXPONENTS[currency.toUpperCase()] ?? 2;
}

/** Integer minor units (as a string or bigint, never a float) to a decimal amount. */
export function fromMinorUnits(units: string | bigint, exponent: number): Decimal {
  const text = typeof units === 'bigint' ? units.toString() : units;
  if (!/^-?\d+$/.test(text)) throw new Error(`minor units must be an integer, got ${JSON.stringify(text)}`);
  return new Money(text).dividedBy(new Money(10).pow(exponent));
}

/** Exact ratio a / b, for fractions such as a refund's share of its invoice. */
export function ratio(numerator: Decimal, denominator: Decimal): Decimal {
  if (denominator.isZero()) throw new Error('ratio with a zero denominator');
  return new Money(numerator).dividedBy(denominator);
}

export { Decimal };
