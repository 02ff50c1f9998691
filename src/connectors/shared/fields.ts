import { z } from 'zod';
import { DECIMAL_PATTERN, Money, money, type Decimal } from '../../domain/money.js';

/**
 * Field schemas shared by the commerce connectors (Shopify, WooCommerce). Pure: no I/O, so map.ts
 * files may use what these produce.
 */

const NUMBER_AS_AMOUNT =
  'must be a decimal string such as "19.99"; a JSON number is accepted only when it is an integer (a fractional number may not be exact)';

/**
 * An amount as a platform sends it: a decimal string ("19.99"), or a JSON number only when it is a
 * safe integer — its string form is then exact. A fractional number (19.99 parsed as a double) is
 * rejected rather than guessed at.
 */
export const PlatformAmount = z.union([z.string(), z.number()]).transform((value, ctx): Decimal => {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : undefined) : value;
  if (text === undefined || !DECIMAL_PATTERN.test(text)) {
    ctx.addIssue({ code: 'custom', message: NUMBER_AS_AMOUNT, input: value });
    return z.NEVER;
  }
  return money(text);
});

/** A quantity: same rule as amounts (platforms send integers as JSON numbers). */
export const PlatformQuantity = PlatformAmount;

/**
 * A tax rate (not money): platforms send it as a JSON number (Shopify `0.06`, WooCommerce
 * `rate_percent: 20`). Read through the number's shortest round-trip string, which is the literal
 * the platform wrote for any rate with up to 15 significant digits.
 */
export const PlatformRate = z.union([z.number(), z.string()]).transform((value, ctx): Decimal => {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  if (!/^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text)) {
    ctx.addIssue({ code: 'custom', message: 'must be a number or a decimal string', input: value });
    return z.NEVER;
  }
  return new Money(text);
});

import { LONE_SURROGATE, hasLoneSurrogate } from '../../domain/key-part.js';

export { LONE_SURROGATE, hasLoneSurrogate };

/**
 * A record id: a string, or a JSON number that is a safe integer. Ids above 2^53 have already been
 * rounded by JSON.parse, so they are rejected instead of silently naming another record.
 */
export const PlatformId = z.union([z.string().trim().min(1), z.number()]).transform((value, ctx): string => {
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) {
      ctx.addIssue({ code: 'custom', message: LONE_SURROGATE, input: value });
      return z.NEVER;
    }
    return value;
  }
  if (!Number.isSafeInteger(value)) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an integer below 2^53 or a string (larger JSON numbers lose digits when parsed)',
      input: value,
    });
    return z.NEVER;
  }
  return String(value);
});

/** A date-time with an offset, as Shopify sends them ("2026-11-20T05:00:00-05:00"). */
export const OffsetDateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' });

/**
 * A WooCommerce `*_gmt` date-time: UTC without a zone designator ("2026-11-20T10:00:00"); a
 * trailing Z is tolerated. Read as UTC.
 */
export const GmtDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/, { error: 'must be a GMT date-time such as 2026-11-20T10:00:00' })
  .transform((value, ctx) => {
    const withZone = value.endsWith('Z') ? value : `${value}Z`;
    if (Number.isNaN(Date.parse(withZone))) {
      ctx.addIssue({ code: 'custom', message: 'is not a valid date-time', input: value });
      return z.NEVER;
    }
    return withZone;
  });

/**
 * One form for every timestamp taxsync emits: UTC, "Z", milliseconds only when not zero. Platforms
 * write the same instant with different offsets; event ids and ordering must not depend on that.
 */
export function utcTimestamp(text: string): string {
  return new Date(text).toISOString().replace('.000Z', 'Z');
}

/** `value` unless it is blank (platforms send "" and null for "not set"). */
export function nonBlank(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Sum of decimals (zero for none). */
export function sum(values: Iterable<Decimal>): Decimal {
  let total = new Money(0);
  for (const v of values) total = total.plus(v);
  return total;
}

/**
 * A line total as unit price × quantity, exactly. When the total does not divide exactly by the
 * quantity (25.00 over 3 units), the line becomes one unit at the whole total: the amount stays
 * exact, which matters more to tax than the unit count.
 */
export function exactUnits(total: Decimal, quantity: Decimal): { unit_price: Decimal; quantity: Decimal } {
  if (quantity.greaterThan(0)) {
    const unit = new Money(total).dividedBy(quantity);
    if (unit.decimalPlaces() <= 10 && unit.times(quantity).equals(total)) return { unit_price: unit, quantity };
  }
  return { unit_price: total, quantity: new Money(1) };
}

/** What a connector's pure map function answers. */
export type MapResult<E> = { kind: 'events'; events: E[] } | { kind: 'ignore'; reason: string };

/** A copy without the keys whose value is undefined, so events carry no empty keys. */
export function compact<T extends Record<string, unknown>>(value: T): T {
  // A plain loop: this runs for every object of every event a webhook carries.
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as T;
}

/** The amount when it is not zero (optional discounts and taxes are left out when zero). */
export function nonZero(value: Decimal): Decimal | undefined {
  return value.isZero() ? undefined : value;
}
