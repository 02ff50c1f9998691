import type { Address } from '../../domain/events.js';
import { Money, type Decimal } from '../../domain/money.js';
import { fromStripeAmount, fromStripeDecimal } from './currencies.js';
import type { StripeAddress } from './schemas.js';

/**
 * Stripe's values as canonical ones, shared by the invoice, credit note and customer mappings of
 * map.ts: whether a document's prices include tax, line amounts, addresses and references. PURE.
 */

// ——— tax behaviour ———

export type Behavior = 'inclusive' | 'exclusive';
interface TaxSignals {
  taxes?: readonly { tax_behavior: Behavior }[] | null;
  tax_amounts?: readonly { inclusive: boolean }[] | null;
  price?: { tax_behavior?: string | null } | null;
}

/** What one line says about tax inclusion: its taxes when it has any, else its price's tax_behavior. */
export function lineBehaviors(line: TaxSignals): Behavior[] {
  const fromTaxes = totalBehaviors(line.taxes, line.tax_amounts);
  if (fromTaxes.length > 0) return fromTaxes;
  const declared = line.price?.tax_behavior;
  return declared === 'inclusive' || declared === 'exclusive' ? [declared] : [];
}

export function totalBehaviors(
  taxes: readonly { tax_behavior: Behavior }[] | null | undefined,
  taxAmounts: readonly { inclusive: boolean }[] | null | undefined,
): Behavior[] {
  if (taxes && taxes.length > 0) return taxes.map((t) => t.tax_behavior);
  if (taxAmounts && taxAmounts.length > 0) return taxAmounts.map((t) => (t.inclusive ? 'inclusive' : 'exclusive'));
  return [];
}

/**
 * One flag for the document: from the lines' taxes (or their prices' tax_behavior), else the
 * document's total taxes, else the amounts (`subtotal_excluding_tax` differs from `subtotal` only
 * when some tax is included in the prices), else exclusive. A document mixing inclusive and
 * exclusive lines cannot be expressed with one flag and is refused rather than sent wrong.
 */
export function decideTaxInclusive(
  lines: Behavior[][],
  totals: Behavior[],
  amounts: { subtotal?: number | null; subtotal_excluding_tax?: number | null },
): { ok: true; value: boolean } | { ok: false; invalid: { kind: 'invalid'; message: string; fields: Record<string, string[]> } } {
  const seen = new Set(lines.flat());
  if (seen.size === 0) for (const b of totals) seen.add(b);
  if (seen.size > 1) {
    return {
      ok: false,
      invalid: {
        kind: 'invalid',
        message: 'the document mixes tax-inclusive and tax-exclusive lines; taxsync sends one tax_inclusive flag per document',
        fields: { 'data.object.lines': ['lines mix inclusive and exclusive tax behavior'] },
      },
    };
  }
  if (seen.size === 1) return { ok: true, value: seen.has('inclusive') };
  const { subtotal, subtotal_excluding_tax: excluding } = amounts;
  return { ok: true, value: subtotal != null && excluding != null && subtotal !== excluding };
}

// ——— amounts and helpers ———

/**
 * Unit price and quantity of a line, such that unit_price × quantity is exactly the line's
 * `amount` — what Stripe charged for it before discounts (prorations, trials and partial periods
 * all live there; `unit_amount` is only the price's list price). In order:
 * - the price's unit amount × quantity when that is the amount (an ordinary line);
 * - else amount ÷ quantity per unit, when that divides exactly (tiered prices);
 * - else one unit at the amount (a trial line of 0, a proration credit of −7.50 for one seat).
 * Amounts are compared in minor units, before any conversion.
 */
export function unitAndQuantity(amount: number, unit: string | undefined, quantity: string | undefined, currency: string) {
  const whole = { unit_price: fromStripeAmount(amount, currency), quantity: new Money(1) };
  if (quantity === undefined) return whole;
  const qty = new Money(quantity);
  if (!qty.greaterThan(0)) return whole;
  if (unit !== undefined && new Money(unit).times(qty).equals(amount)) return { unit_price: fromStripeDecimal(unit, currency), quantity: qty };
  const perUnit = new Money(amount).dividedBy(qty);
  if (perUnit.decimalPlaces() <= 12 && perUnit.times(qty).equals(amount)) {
    return { unit_price: fromStripeDecimal(perUnit.toFixed(), currency), quantity: qty };
  }
  return whole;
}

export function sumAmounts(items: readonly { amount: number }[], currency: string): Decimal {
  return items.reduce<Decimal>((sum, item) => sum.plus(fromStripeAmount(item.amount, currency)), new Money(0));
}

export function optionalAmount(amount: number | null | undefined, currency: string): Decimal | undefined {
  return amount == null ? undefined : fromStripeAmount(amount, currency);
}

export function refId(ref: string | { id: string } | null | undefined): string | undefined {
  if (ref == null) return undefined;
  return typeof ref === 'string' ? ref : ref.id;
}

/** Stripe's address as the canonical one: line1 and line2 joined into `street`. */
export function address(a: StripeAddress | null | undefined): Address | undefined {
  if (!a) return undefined;
  const street = [a.line1, a.line2].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join(', ');
  const out = compact({
    street: street || undefined,
    city: a.city || undefined,
    state: a.state || undefined,
    zip: a.postal_code || undefined,
    country: a.country ? a.country.toUpperCase() : undefined,
  });
  return Object.keys(out).length > 0 ? out : undefined;
}

export function addresses(billing: Address | undefined, shipping: Address | undefined) {
  return billing || shipping ? compact({ billing, shipping }) : undefined;
}

/** Drops undefined members so the wire form has no empty keys. */
export function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
