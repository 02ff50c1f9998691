import { z } from 'zod';
import { LONE_SURROGATE, hasLoneSurrogate } from '../../domain/key-part.js';
import { DECIMAL_PATTERN, Money, amountProblem, money, type Decimal } from '../../domain/money.js';

/**
 * Field schemas shared by the connectors (Shopify, WooCommerce, Xero, QuickBooks). Pure: no I/O,
 * so map.ts files may use what these produce.
 */

export { LONE_SURROGATE, hasLoneSurrogate };

/** Optional text: platforms send null or leave a field out for "not set". */
export const text = z.string().nullish();

/** Text that may become part of a key (a document number): well-formed Unicode only. */
export const KeyText = z.string().refine((t) => !hasLoneSurrogate(t), { error: LONE_SURROGATE });

/** An array that may be null or left out (platforms omit empty lists): read as []. */
export const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v): z.output<T>[] => v ?? []);

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

/**
 * Significant digits a JSON number can carry and still be the decimal the platform wrote: any
 * decimal of at most 15 significant digits survives text → double → shortest string unchanged
 * (DBL_DIG). An integer's trailing zeros are counted.
 */
export const EXACT_DIGITS = 15;

const NOT_A_DECIMAL = 'must be a decimal number such as 19.95 (a string without exponent; not NaN or Infinity)';

/** An amount as readAmount reads it; `inexact` when only the number's digits are the problem. */
export type AmountRead = { ok: true; amount: Decimal } | { ok: false; inexact: boolean; message: string };

/**
 * An amount written as a JSON number (Xero, QuickBooks: `19.95`, `0.9090889`) or a decimal
 * string. JSON.parse has made a number a double (Node 20 gives a reviver no source text), and
 * String(n) is the shortest text that reads back as that double: the literal the platform wrote
 * whenever it had at most 15 significant digits, in plain form or, below 1e-6 and from 1e21, in
 * exponent form ("1e-7"), which is as exact and is read. A number whose shortest form has more
 * digits (0.1 + 0.2 is 0.30000000000000004) is not the decimal written, and is refused. A literal
 * of 16 or more digits that rounds to a double with a short form (0.10000000000000001 is the
 * double 0.1) cannot be told from that short literal once parsed: it reads as the short one. A
 * string must be a plain decimal (DECIMAL_PATTERN, after trimming). Either way the value must then
 * be an amount taxsync supports (amountProblem: at most 18 digits before the point, 15 after), so
 * a field too long or too fine is refused under the platform's own field name.
 */
export function readAmount(value: number | string): AmountRead {
  const isNumber = typeof value === 'number';
  const written = isNumber ? String(value) : value.trim();
  if (isNumber ? !Number.isFinite(value) : !DECIMAL_PATTERN.test(written)) return { ok: false, inexact: false, message: NOT_A_DECIMAL };
  const amount = new Money(written);
  if (isNumber && amount.precision(true) > EXACT_DIGITS) {
    return { ok: false, inexact: true, message: `has more than ${EXACT_DIGITS} significant digits, so the JSON number may not be the decimal the platform wrote` };
  }
  const problem = amountProblem(amount);
  return problem === undefined ? { ok: true, amount } : { ok: false, inexact: false, message: problem };
}

/** readAmount as a field schema: an amount, or an issue naming the field. */
export const ExactAmount = z.union([z.number(), z.string()]).transform((value, ctx): Decimal => {
  const read = readAmount(value);
  if (read.ok) return read.amount;
  ctx.addIssue({ code: 'custom', message: read.message, input: value });
  return z.NEVER;
});

const DATE_TIME_PARTS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/;

/**
 * Whether the date and time an ISO 8601 date-time begins with exist ("2026-02-30T10:00" does
 * not). Date.parse rolls 30 February over into March and reads 24:00 as the next midnight, so a
 * reader checks this before it. Seconds are optional; what follows them is not looked at.
 */
export function isCalendarDateTime(value: string): boolean {
  const m = DATE_TIME_PARTS.exec(value);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  // A month outside 1–12 has no days, so no day fits it.
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59;
}

/** A date-time with an offset, as Shopify sends them ("2026-11-20T05:00:00-05:00"). */
export const OffsetDateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' });

/**
 * A WooCommerce `*_gmt` date-time: UTC without a zone designator ("2026-11-20T10:00:00"); a
 * trailing Z is tolerated. Read as UTC. A date or time that does not exist (30 February, 24:00)
 * is refused, not rolled over.
 */
export const GmtDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/, { error: 'must be a GMT date-time such as 2026-11-20T10:00:00' })
  .transform((value, ctx) => {
    const withZone = value.endsWith('Z') ? value : `${value}Z`;
    if (!isCalendarDateTime(value) || Number.isNaN(Date.parse(withZone))) {
      ctx.addIssue({ code: 'custom', message: 'is not a valid date-time', input: value });
      return z.NEVER;
    }
    return withZone;
  });

/**
 * One form for every timestamp taxsync emits: UTC, "Z", milliseconds only when not zero. Platforms
 * write the same instant with different offsets; event ids and ordering must not depend on that.
 * Takes a date-time a schema has checked, or milliseconds since the epoch.
 */
export function utcTimestamp(at: string | number): string {
  return new Date(at).toISOString().replace('.000Z', 'Z');
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

/** The object, or undefined when it has no keys (an address or address pair with nothing in it). */
export function nonEmpty<T extends object>(value: T): T | undefined {
  return Object.keys(value).length === 0 ? undefined : value;
}

/** The amount when it is not zero (optional discounts and taxes are left out when zero). */
export function nonZero(value: Decimal): Decimal | undefined {
  return value.isZero() ? undefined : value;
}
