import { VatTransactionRequest } from '../api/schemas/vat.js';
import type { FieldErrors } from '../domain/errors.js';
import { Money, formatMoney, type Decimal } from '../domain/money.js';
import { ISO_COUNTRIES } from '../domain/reference/countries.js';
import { ISO_CURRENCIES } from '../domain/reference/currencies.js';
import { vatNumberProblem } from '../domain/reference/vat-numbers.js';

/**
 * The validation rules of VAT submission (vat-compliance-api.md, "Errors"), answered in the
 * service's `{field: [messages]}` shape. PURE. taxsync runs it on every body before a call
 * (checkBody in src/mapping/vat/submission.ts); the emulator runs the same function and adds what only the service can
 * know (rule 7, warnings), so client and emulator cannot disagree.
 *
 * | rule | field | checked here |
 * |---|---|---|
 * | 1. net + vat = gross (exactly) | gross | yes |
 * | 2. net × vat_rate / 100 = vat within `tolerance` | vat | yes |
 * | 3. invoice_date not after `today` | invoice_date | yes |
 * | 4. vat_number in the partner country's format (EU, GB, CH, NO) | vat_number | yes |
 * | 5. currency in ISO 4217 | currency | yes |
 * | 6. partner_country in ISO 3166-1 alpha-2 | partner_country | yes |
 * | 7. invoice_number unique per entity jurisdiction | invoice_number | NO: only the service (and taxsync's ledger) knows what was accepted |
 * | 8. net, vat, gross, vat_rate with at most 2 decimal places | that field | yes |
 * | 9. net positive | net | yes |
 * | 10. transaction_type_id a known type | transaction_type_id | yes, against `knownTypeIds` |
 *
 * Field presence, types and lengths (255 for invoice_number, partner_name, vat_number) come from
 * the request schema (VatTransactionRequest) and are reported on their field too.
 */

export interface VatValidationOptions {
  /** Today, `YYYY-MM-DD` (rule 3). */
  today: string;
  /** Ids of the transaction types list (rule 10). */
  knownTypeIds: ReadonlySet<string>;
  /** Rule 2: the largest accepted |vat − net × vat_rate / 100|, a decimal string such as "0.01". */
  tolerance: string | Decimal;
  /** The message for a key the schema does not know. @defaultValue `unknown field <key>` */
  unknownField?: (key: string) => string;
}

export interface VatCheck {
  /** Field errors: the body would be refused (422). Empty when it passes. */
  errors: FieldErrors;
  /** Findings that do not block: vat within the tolerance but not the half-up rounded product. */
  notes: FieldErrors;
  /** The fields that parsed (strings trimmed), whether or not the rules pass. */
  value: Partial<VatTransactionRequest>;
}

export const DECIMAL_FIELDS = ['net', 'vat', 'gross', 'vat_rate'] as const;
const shape = VatTransactionRequest.shape;
type Field = keyof typeof shape;
const FIELDS = Object.keys(shape) as Field[];

/** Every rule but 7; the field errors only. `{}` means the body may be sent. */
export function validateVatTransaction(body: unknown, options: VatValidationOptions): FieldErrors {
  return checkVatTransaction(body, options).errors;
}

/** Every rule but 7, with the non-blocking findings and the parsed value (for the emulator's warnings). */
export function checkVatTransaction(raw: unknown, options: VatValidationOptions): VatCheck {
  const errors: FieldErrors = {};
  const notes: FieldErrors = {};
  const add = (to: FieldErrors, field: string, message: string) => (to[field] ??= []).push(message);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    add(errors, '(body)', 'the body must be a JSON object');
    return { errors, notes, value: {} };
  }
  const body = raw as Record<string, unknown>;
  const unknownField = options.unknownField ?? ((key: string) => `unknown field ${key}`);

  for (const key of Object.keys(body)) if (!Object.hasOwn(shape, key)) add(errors, key, unknownField(key));
  const value: Partial<Record<Field, unknown>> = {};
  for (const field of FIELDS) {
    const parsed = shape[field].safeParse(body[field]);
    if (parsed.success) {
      if (parsed.data !== undefined) value[field] = parsed.data;
    } else if (body[field] === undefined) {
      add(errors, field, 'This field is required.');
    } else if (body[field] === null) {
      add(errors, field, 'This field may not be null.');
    } else {
      for (const issue of parsed.error.issues) add(errors, field, issue.message);
    }
  }
  const v = value as Partial<VatTransactionRequest>;

  // Rule 8: at most 2 decimal places. The arithmetic rules only run on well-formed amounts.
  const amounts: Partial<Record<(typeof DECIMAL_FIELDS)[number], Decimal>> = {};
  for (const field of DECIMAL_FIELDS) {
    const text = v[field];
    if (text === undefined) continue;
    const places = text.split('.')[1]?.length ?? 0;
    if (places > 2) add(errors, field, `at most 2 decimal places are allowed (got ${text})`);
    else amounts[field] = new Money(text);
  }
  const { net, vat, gross, vat_rate: rate } = amounts;
  // Rule 9.
  if (net !== undefined && !net.greaterThan(0)) add(errors, 'net', `net must be positive (got ${v.net})`);
  // Rule 1.
  if (net !== undefined && vat !== undefined && gross !== undefined && !net.plus(vat).equals(gross)) {
    add(errors, 'gross', `net + vat must equal gross: ${v.net} + ${v.vat} = ${formatMoney(net.plus(vat), 2)}, not ${v.gross}`);
  }
  // Rule 2.
  if (net !== undefined && vat !== undefined && rate !== undefined) {
    const tolerance = new Money(options.tolerance);
    const expected = net.times(rate).dividedBy(100);
    const difference = vat.minus(expected).abs();
    const rounded = formatMoney(expected, 2);
    if (difference.greaterThan(tolerance)) {
      add(errors, 'vat', `vat must be net × vat_rate / 100 = ${rounded} within ${String(options.tolerance)}; got ${v.vat}`);
    } else if (!vat.equals(new Money(rounded))) {
      add(notes, 'vat', `vat ${v.vat} differs from net × vat_rate / 100 = ${rounded} (within the tolerance of ${String(options.tolerance)})`);
    }
  }
  // Rule 3. ISO dates compare as strings.
  if (v.invoice_date !== undefined && v.invoice_date > options.today) {
    add(errors, 'invoice_date', `invoice_date ${v.invoice_date} is in the future (today is ${options.today})`);
  }
  // Rule 6, then rule 4 (which needs a real country).
  if (v.partner_country !== undefined && !ISO_COUNTRIES.has(v.partner_country)) {
    add(errors, 'partner_country', `${v.partner_country} is not an ISO 3166-1 alpha-2 country code`);
  } else if (v.partner_country !== undefined && v.vat_number !== undefined && v.vat_number !== '') {
    const problem = vatNumberProblem(v.vat_number, v.partner_country);
    if (problem !== undefined) add(errors, 'vat_number', problem);
  }
  // Rule 5.
  if (v.currency !== undefined && !ISO_CURRENCIES.has(v.currency)) add(errors, 'currency', `${v.currency} is not an ISO 4217 currency code`);
  // Rule 10.
  if (v.transaction_type_id !== undefined && !options.knownTypeIds.has(v.transaction_type_id)) {
    add(errors, 'transaction_type_id', `${v.transaction_type_id} is not a known transaction type (see GET transaction-types)`);
  }
  // Rule 7 (invoice_number unique per entity jurisdiction) cannot be checked here: see the table above.
  return { errors, notes, value: v };
}
