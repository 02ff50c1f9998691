import { DECIMAL_PATTERN, Money, fromMinorUnits, type Decimal } from '../../domain/money.js';

/**
 * Stripe's own minor-unit exponents. They are NOT ISO 4217: the wrong exponent is a 100× error.
 *
 * Sources (docs.stripe.com/currencies, sections "Zero-decimal currencies", "Three-decimal
 * currencies" and "Special cases"):
 * - Zero-decimal: "the charge and the amount are the same, without requiring multiplication"
 *   (500 JPY is `amount: 500`).
 * - Three-decimal: BHD, JOD, KWD, OMR, TND; amounts are in thousandths (Stripe additionally wants
 *   the last digit to be 0 on payments, which does not change the exponent).
 * - Special cases, kept at TWO decimals although ISO 4217 (or Stripe's own zero-decimal list)
 *   says otherwise:
 *   - ISK: ISO exponent 0, but "ISK will remain a two-decimal currency in the Stripe API, and an
 *     ISK amount of `100` will continue to represent 1 króna" (support.stripe.com, "Deprecation
 *     of fractional ISK charges and refunds").
 *   - UGX: listed among Stripe's zero-decimal currencies, but the special cases section says it
 *     "became a zero-decimal currency, but backwards compatibility requires you to represent it as
 *     a two-decimal value … To charge 5 UGX, provide an amount value of 500". The special case
 *     wins: Stripe rejects UGX amounts not divisible by 100 ("Currency UGX has become effectively
 *     zero-decimal and charged amounts must be evenly divisible by 100"), which only makes sense
 *     at exponent 2 (woocommerce/woocommerce-gateway-stripe#2723, Shopify/money#258).
 *   - HUF, TWD: "Stripe treats HUF [TWD] as a zero-decimal currency for payouts, even though you
 *     can charge two-decimal amounts": exponent 2 for everything taxsync reads.
 * - Everything else: two decimals ("unless otherwise noted").
 */
export const STRIPE_ZERO_DECIMAL: readonly string[] = [
  'BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'VND', 'VUV', 'XAF', 'XOF', 'XPF',
];
export const STRIPE_THREE_DECIMAL: readonly string[] = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'];
/** Two decimals in the Stripe API whatever ISO 4217 says (see above). */
export const STRIPE_TWO_DECIMAL_SPECIAL_CASES: readonly string[] = ['HUF', 'ISK', 'TWD', 'UGX'];

const EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...STRIPE_ZERO_DECIMAL.map((c) => [c, 0] as const),
  ...STRIPE_THREE_DECIMAL.map((c) => [c, 3] as const),
  ...STRIPE_TWO_DECIMAL_SPECIAL_CASES.map((c) => [c, 2] as const),
]);

/** Digits after the decimal point of a Stripe amount in this currency (case-insensitive code). */
export function stripeExponent(currency: string): number {
  return EXPONENTS.get(currency.toUpperCase()) ?? 2;
}

/** A Stripe integer amount (minor units) as a decimal amount. Throws on a non-integer. */
export function fromStripeAmount(amount: number, currency: string): Decimal {
  if (!Number.isSafeInteger(amount)) throw new Error(`Stripe amounts are integers in minor units, got ${String(amount)}`);
  return fromMinorUnits(String(amount), stripeExponent(currency));
}

/**
 * A Stripe `*_decimal` string (minor units with up to 12 decimals, e.g. `unit_amount_decimal`) as a
 * decimal amount. These fields are decimal by design, unlike the integer amounts.
 */
export function fromStripeDecimal(text: string, currency: string): Decimal {
  if (!DECIMAL_PATTERN.test(text)) throw new Error(`not a decimal string: ${JSON.stringify(text)}`);
  return new Money(text).dividedBy(new Money(10).pow(stripeExponent(currency)));
}
