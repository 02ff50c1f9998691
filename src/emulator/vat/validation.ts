import { VatTransactionRequest } from '../../api/schemas/index.js';
import type { FieldErrors } from '../../domain/errors.js';
import { Money, formatMoney, type Decimal } from '../../domain/money.js';
import { unknownFieldMessage } from '../answer.js';
import { EU_MEMBERS, ISO_COUNTRIES, ISO_CURRENCIES, vatNumberProblem, type VatTransactionTypeInfo } from './reference-data.js';

/**
 * The ten validation rules of VAT submission (vat-compliance-api.md, Errors) plus the findings the
 * emulator reports as warnings (docs/decisions.md, Emulator). Pure: what it needs is passed in.
 */

export interface VatValidationContext {
  /** Today, `YYYY-MM-DD` (rule 3). */
  today: string;
  /** Rule 2: a difference up to this is a warning, above it an error. */
  tolerance: string;
  types: ReadonlyMap<string, VatTransactionTypeInfo>;
  /** Rule 7. */
  isDuplicate(entityJurisdiction: string, invoiceNumber: string): boolean;
  isKnownEntityJurisdiction(id: string): boolean;
}

export type VatValidation =
  | { ok: false; status: 400 | 422; error: string; details: FieldErrors }
  | {
      ok: true;
      value: VatTransactionRequest;
      type: VatTransactionTypeInfo;
      /** Data findings that do not block (validity_status warning). */
      validity: FieldErrors;
      /** Compliance findings that do not block (compliance_status warning). */
      compliance: FieldErrors;
    };

const DECIMAL_FIELDS = ['net', 'vat', 'gross', 'vat_rate'] as const;
const shape = VatTransactionRequest.shape;
type Field = keyof typeof shape;

export function validateVatTransaction(raw: unknown, ctx: VatValidationContext): VatValidation {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, status: 400, error: 'invalid request data: the body must be a JSON object', details: {} };
  }
  const body = raw as Record<string, unknown>;
  const errors: FieldErrors = {};
  const validity: FieldErrors = {};
  const compliance: FieldErrors = {};
  const add = (to: FieldErrors, field: string, message: string) => (to[field] ??= []).push(message);

  for (const key of Object.keys(body)) if (!(key in shape)) add(errors, key, unknownFieldMessage(key));
  const value: Partial<Record<Field, unknown>> = {};
  for (const field of Object.keys(shape) as Field[]) {
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
    const expected = net.times(rate).dividedBy(100);
    const difference = vat.minus(expected).abs();
    const rounded = formatMoney(expected, 2);
    if (difference.greaterThan(ctx.tolerance)) {
      add(errors, 'vat', `vat must be net × vat_rate / 100 = ${rounded} within ${ctx.tolerance}; got ${v.vat}`);
    } else if (!vat.equals(new Money(rounded))) {
      add(validity, 'vat', `vat ${v.vat} differs from net × vat_rate / 100 = ${rounded} (within the tolerance of ${ctx.tolerance})`);
    }
  }
  // Rule 3.
  if (v.invoice_date !== undefined && v.invoice_date > ctx.today) {
    add(errors, 'invoice_date', `invoice_date ${v.invoice_date} is in the future (today is ${ctx.today})`);
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
  const type = v.transaction_type_id === undefined ? undefined : ctx.types.get(v.transaction_type_id);
  if (v.transaction_type_id !== undefined && type === undefined) {
    add(errors, 'transaction_type_id', `${v.transaction_type_id} is not a known transaction type (see GET transaction-types)`);
  }
  // Rule 7.
  if (v.entity_jurisdiction !== undefined && v.invoice_number !== undefined && ctx.isDuplicate(v.entity_jurisdiction, v.invoice_number)) {
    add(errors, 'invoice_number', `invoice_number ${v.invoice_number} already exists for entity jurisdiction ${v.entity_jurisdiction}`);
  }
  if (Object.keys(errors).length > 0) return { ok: false, status: 422, error: 'validation failed', details: errors };

  const request = VatTransactionRequest.parse(value);
  const found = type as VatTransactionTypeInfo;
  if (found.b2b && (request.vat_number === undefined || request.vat_number === '')) {
    add(compliance, 'vat_number', `no vat_number on a ${found.name} transaction: the partner's VAT number is expected`);
  }
  if (found.intraEu && request.vat_rate_type !== 'zero_rated') {
    add(compliance, 'vat_rate_type', `${found.name} are normally zero_rated, not ${request.vat_rate_type}`);
  }
  if (found.intraEu && !EU_MEMBERS.has(request.partner_country)) {
    add(compliance, 'partner_country', `${found.name} need a partner in another EU member state; ${request.partner_country} is not one`);
  }
  if ((request.vat_rate_type === 'zero_rated' || request.vat_rate_type === 'exempt') && !new Money(request.vat_rate).isZero()) {
    add(compliance, 'vat_rate', `vat_rate_type ${request.vat_rate_type} with a non-zero vat_rate ${request.vat_rate}`);
  }
  if (!ctx.isKnownEntityJurisdiction(request.entity_jurisdiction)) {
    add(compliance, 'entity_jurisdiction', `${request.entity_jurisdiction} is not a registered entity jurisdiction (create a registration first)`);
  }
  return { ok: true, value: request, type: found, validity, compliance };
}
