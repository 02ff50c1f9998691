/**
 * Primitives shared by the tax-engine and VAT schemas.
 *
 * Decisions (copy to docs/decisions.md):
 * - Uuid accepts any 8-4-4-4-12 hex string (z.guid), not only RFC 9562 variants: the specs say
 *   only "UUID", and rejecting an odd-but-real id in a response would fail a call that succeeded.
 * - IsoDateTime requires `Z` or a `±hh:mm` offset; a datetime without a zone is rejected.
 * - `source` fields in resource schemas use SourceValue (any lowercase identifier), not the
 *   Source enum: the nine platform values are assumed and configurable. Whoever holds the
 *   configured list narrows a schema with `restrictSources` (the emulator, outgoing bodies).
 */
import { z } from 'zod';
import { DECIMAL_PATTERN, Money } from '../../domain/money.js';

/** A decimal as a string: optional minus, digits, optional fraction. Never a JS number. */
export const DecimalString = z.string().regex(/^-?\d+(\.\d+)?$/, 'expected a decimal string such as "12.50"');
export type DecimalString = z.infer<typeof DecimalString>;

/** A UUID in its canonical 8-4-4-4-12 hex form. */
export const Uuid = z.guid();
export type Uuid = z.infer<typeof Uuid>;

/** ISO 8601 datetime with `Z` or an offset, e.g. `2025-03-01T10:00:00Z`. */
export const IsoDateTime = z.iso.datetime({ offset: true });
export type IsoDateTime = z.infer<typeof IsoDateTime>;

// z.iso.date's pattern is calendar-aware: it rejects 2023-02-29 and 2025-04-31.
/** A real calendar date, `YYYY-MM-DD`. */
export const IsoDate = z.iso.date();
export type IsoDate = z.infer<typeof IsoDate>;

/** ISO 3166-1 alpha-2 shape (two uppercase letters); whether the code exists is checked elsewhere. */
export const CountryCode = z.string().regex(/^[A-Z]{2}$/, 'expected a two-letter uppercase country code');
export type CountryCode = z.infer<typeof CountryCode>;

/** ISO 4217 shape (three uppercase letters); whether the code exists is checked elsewhere. */
export const CurrencyCode = z.string().regex(/^[A-Z]{3}$/, 'expected a three-letter uppercase currency code');
export type CurrencyCode = z.infer<typeof CurrencyCode>;

/** The default source list: `api` plus the nine platform identifiers taxsync assumes (DESIGN.md "Sources"). */
export const SOURCES = [
  'api',
  'shopify',
  'stripe',
  'woocommerce',
  'bigcommerce',
  'quickbooks',
  'xero',
  'netsuite',
  'zoho',
  'chargebee',
] as const;

/** One of the default source values. */
export const Source = z.enum(SOURCES);
export type Source = z.infer<typeof Source>;

const SOURCE_PATTERN = /^[a-z][a-z0-9_]*$/;

/** Any well-formed source value (a lowercase identifier); membership in the configured list is separate. */
export const SourceValue = z.string().regex(SOURCE_PATTERN, 'expected a lowercase source identifier');
export type SourceValue = z.infer<typeof SourceValue>;

/** Builds the source enum from a configured list; throws on an empty list or a malformed value. */
export function makeSourceSchema(values: readonly string[]) {
  if (values.length === 0) throw new Error('makeSourceSchema: the source list is empty');
  const bad = values.filter((v) => !SOURCE_PATTERN.test(v));
  if (bad.length > 0) throw new Error(`makeSourceSchema: not lowercase identifiers: ${bad.join(', ')}`);
  return z.enum(values as readonly [string, ...string[]]);
}

const SOURCE_KEYS = new Set(['source', 'customer_source']);

/**
 * Adds a check that every `source` / `customer_source` value anywhere in the parsed body is in
 * `values`; each offender gets an issue at its own path. The schema's type is unchanged.
 */
export function restrictSources<T extends z.ZodType>(schema: T, values: readonly string[]): T {
  const allowed = makeSourceSchema(values);
  return schema.superRefine((body, ctx) => {
    const visit = (node: unknown, path: PropertyKey[]): void => {
      if (Array.isArray(node)) {
        node.forEach((child, i) => visit(child, [...path, i]));
      } else if (node !== null && typeof node === 'object') {
        for (const [key, child] of Object.entries(node)) {
          if (SOURCE_KEYS.has(key) && typeof child === 'string' && !allowed.safeParse(child).success) {
            ctx.addIssue({
              code: 'custom',
              path: [...path, key],
              message: `unknown source "${child}"; expected one of ${values.join(', ')}`,
            });
          } else {
            visit(child, [...path, key]);
          }
        }
      }
    };
    visit(body, []);
  });
}

// ---------------------------------------------------------------------------------------------
// Reading answers (docs/decisions.md, "Reading answers"): the pieces answer schemas are made of.

/**
 * An object taxsync reads `shape` from. Every other field passes through as received, never
 * checked: the answer's static type shows them as the contract documents them (see `Read`), but
 * taxsync's own code reads only what the answer schema lists.
 */
export function reads<S extends z.ZodRawShape>(shape: S): z.ZodObject<S> {
  return z.looseObject(shape);
}

/**
 * Read when present and readable; null, a wrong type or a bad format reads as absent (the drift
 * detector reports it). For every field taxsync uses but can do without.
 */
export function lenient<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

/** A documented list of values that may grow: a listed value, or any other string as sent. */
export function openEnum<const V extends readonly string[]>(_values: V): z.ZodType<V[number] | (string & {})> {
  return z.string();
}

/**
 * An id of the service's, to send back in a path or a body: any non-empty string (UUIDs per the
 * contract), or a whole JSON number read as its digits (a number past 2^53 has lost digits in
 * JSON.parse and is not read).
 */
export const AnswerId = z.union([z.string().trim().min(1), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String)]);

const ANY_DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Significant digits of a number's shortest spelling ("1.5e-7" → 2, "0.30000000000000004" → 17). */
function significantDigits(shortest: string): number {
  const mantissa = shortest.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length || 1;
}

/**
 * A JSON number as the decimal the service wrote. A decimal of up to 15 significant digits is the
 * one a double holds unambiguously, and JavaScript's shortest spelling of that double gives those
 * digits back exactly (1.5 → "1.5", 190.05 → "190.05"). More digits than that were not kept by
 * JSON.parse (0.1 + 0.2 spells 0.30000000000000004): such a number is not read.
 */
const ExactNumber = z
  .number()
  .refine((n) => Number.isFinite(n) && significantDigits(String(n)) <= 15, 'expected a decimal string (a number with more than 15 significant digits is not exact)')
  .transform((n) => new Money(String(n)).toFixed());

/**
 * A decimal in an answer: any scale ("3.3", "3.300000"), and the spellings decimal libraries print
 * ("0E-8", "+1.5", ".5"), turned into plain notation; a JSON number as the decimal written, up to
 * 15 significant digits (ExactNumber). Anything but a plain decimal string is still drift.
 */
export const AnswerDecimal = z.union([
  z
    .string()
    .trim()
    .regex(ANY_DECIMAL, 'expected a decimal string')
    .transform((text) => (DECIMAL_PATTERN.test(text) ? text : new Money(text).toFixed())),
  ExactNumber,
]);

/**
 * A boolean as some services write it: true / false, or the strings "true" / "false" (any case).
 * Anything else is unreadable. A string is still drift (the contract's schema reports it).
 */
export const AnswerBoolean = z.union([z.boolean(), z.string().trim().toLowerCase().pipe(z.enum(['true', 'false'])).transform((text) => text === 'true')]);

/** An array of which only the readable items are kept (an item the schema refuses is dropped; drift reports it). */
export function readableItems<T extends z.ZodType>(item: T) {
  return z.array(z.unknown()).transform((items) =>
    items.flatMap((value) => {
      const parsed = item.safeParse(value);
      return parsed.success ? [parsed.data] : [];
    }),
  );
}

/**
 * What a client method answers: the fields the answer schema `A` reads (checked as it says) over
 * the rest of the body as received, typed as the contract `C` documents it but never checked.
 */
export type Read<A, C> = Omit<C, keyof A> & A;
