import { z } from 'zod';
import { Dec, fixed, placesOf } from '../contract/decimal.js';
import { isCountry } from '../contract/iso-3166.js';
import { isCurrency } from '../contract/iso-4217.js';
import { CalendarDate, CountryShape, CurrencyShape, Decimal, Id, type FieldErrors } from '../contract/primitives.js';
import { vatNumberFinding } from '../contract/vat-numbers.js';

/**
 * VAT transaction submission as the emulator reads vat-compliance-api.md: the request table (field
 * by field: "Strings are UTF-8 and trimmed of whitespace") and the ten validation rules of
 * "Errors", each reported on its field. Rule 7 needs the stored transactions and is the caller's
 * (validation.ts). PURE.
 */

export const VAT_RATE_TYPE_VALUES = ['standard', 'reduced', 'zero_rated', 'exempt'] as const;

const trimmed = (max?: number) => {
  const base = z.string().trim().min(1, 'This field may not be blank.');
  return max === undefined ? base : base.max(max, `Ensure this field has no more than ${max} characters.`);
};

/** The request table: field → (its reading, required). */
const FIELDS = {
  entity_jurisdiction: [Id, true],
  invoice_number: [trimmed(255), true],
  invoice_date: [CalendarDate, true],
  partner_name: [trimmed(255), true],
  partner_country: [CountryShape, true],
  vat_number: [z.string().trim().max(255, 'Ensure this field has no more than 255 characters.'), false],
  net: [Decimal, true],
  vat: [Decimal, true],
  gross: [Decimal, true],
  vat_rate: [Decimal, true],
  vat_rate_type: [z.enum(VAT_RATE_TYPE_VALUES), true],
  currency: [CurrencyShape, true],
  reporting_period: [CalendarDate, true],
  transaction_type_id: [Id, true],
  source: [trimmed(), true],
} as const satisfies Record<string, readonly [z.ZodType, boolean]>;

type Field = keyof typeof FIELDS;

/** A submission whose fields all parsed. */
export interface VatSubmission {
  entity_jurisdiction: string;
  invoice_number: string;
  invoice_date: string;
  partner_name: string;
  partner_country: string;
  vat_number?: string;
  net: string;
  vat: string;
  gross: string;
  vat_rate: string;
  vat_rate_type: (typeof VAT_RATE_TYPE_VALUES)[number];
  currency: string;
  reporting_period: string;
  transaction_type_id: string;
  source: string;
}

export interface RuleContext {
  /** Today, YYYY-MM-DD (rule 3). */
  today: string;
  /** Rule 2: a difference up to this passes (a warning when not the rounded value); above, an error. */
  tolerance: string;
  isKnownType(id: string): boolean;
  /** The message for a field the table does not have. */
  unknownField(key: string): string;
}

export interface RuleOutcome {
  errors: FieldErrors;
  /** Data findings that do not block (validity_status warning). */
  notes: FieldErrors;
  /** Every field that parsed, trimmed. */
  parsed: Partial<VatSubmission>;
}

const AMOUNTS = ['net', 'vat', 'gross', 'vat_rate'] as const;

export function applyVatRules(body: Record<string, unknown>, ctx: RuleContext): RuleOutcome {
  const errors: FieldErrors = {};
  const notes: FieldErrors = {};
  const note = (to: FieldErrors, field: string, message: string) => void (to[field] ??= []).push(message);
  const parsed: Partial<Record<Field, string>> = {};

  for (const key of Object.keys(body)) if (!(key in FIELDS)) note(errors, key, ctx.unknownField(key));
  for (const [field, [schema, required]] of Object.entries(FIELDS) as [Field, readonly [z.ZodType, boolean]][]) {
    const raw = body[field];
    if (raw === undefined) {
      if (required) note(errors, field, 'This field is required.');
      continue;
    }
    if (raw === null) {
      note(errors, field, 'This field may not be null.');
      continue;
    }
    const result = schema.safeParse(raw);
    if (result.success) parsed[field] = result.data as string;
    else for (const issue of result.error.issues) note(errors, field, issue.message);
  }
  const v = parsed as Partial<VatSubmission>;

  // Rule 8 first: the arithmetic rules read only amounts written with at most two decimals.
  const amount: Partial<Record<(typeof AMOUNTS)[number], Dec>> = {};
  for (const field of AMOUNTS) {
    const written = v[field];
    if (written === undefined) continue;
    if (placesOf(written) > 2) note(errors, field, `at most 2 decimal places are allowed; ${written} has ${placesOf(written)}`);
    else amount[field] = new Dec(written);
  }
  // Rule 9.
  if (amount.net !== undefined && amount.net.lte(0)) note(errors, 'net', `net must be positive; got ${v.net}`);
  // Rule 1: exactly.
  if (amount.net && amount.vat && amount.gross && !amount.net.plus(amount.vat).eq(amount.gross)) {
    note(errors, 'gross', `net + vat must equal gross: ${v.net} + ${v.vat} = ${fixed(amount.net.plus(amount.vat), 2)}, not ${v.gross}`);
  }
  // Rule 2: "within a rounding tolerance".
  if (amount.net && amount.vat && amount.vat_rate) {
    const exact = amount.net.times(amount.vat_rate).dividedBy(100);
    const rounded = fixed(exact, 2);
    const off = amount.vat.minus(exact).abs();
    if (off.gt(ctx.tolerance)) {
      note(errors, 'vat', `vat must be net × vat_rate / 100 = ${rounded} within ${ctx.tolerance}; got ${v.vat}`);
    } else if (!amount.vat.eq(rounded)) {
      note(notes, 'vat', `vat ${v.vat} is not net × vat_rate / 100 = ${rounded}, but within the tolerance of ${ctx.tolerance}`);
    }
  }
  // Rule 3: dates YYYY-MM-DD compare as text.
  if (v.invoice_date !== undefined && v.invoice_date > ctx.today) {
    note(errors, 'invoice_date', `invoice_date ${v.invoice_date} is in the future (today is ${ctx.today})`);
  }
  // Rule 6; rule 4 needs an assigned country to know the format.
  if (v.partner_country !== undefined && !isCountry(v.partner_country)) {
    note(errors, 'partner_country', `${v.partner_country} is not an ISO 3166-1 alpha-2 country code`);
  } else if (v.partner_country !== undefined && v.vat_number) {
    const finding = vatNumberFinding(v.vat_number, v.partner_country);
    if (finding !== undefined) note(errors, 'vat_number', finding);
  }
  // Rule 5.
  if (v.currency !== undefined && !isCurrency(v.currency)) note(errors, 'currency', `${v.currency} is not an ISO 4217 currency code`);
  // Rule 10.
  if (v.transaction_type_id !== undefined && !ctx.isKnownType(v.transaction_type_id)) {
    note(errors, 'transaction_type_id', `${v.transaction_type_id} is not a known transaction type (GET the transaction types list)`);
  }
  return { errors, notes, parsed: v };
}
