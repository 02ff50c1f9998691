import { EU_STATES } from '../contract/iso-3166.js';
import { Dec } from '../contract/decimal.js';
import type { FieldErrors } from '../contract/primitives.js';
import { unknownFieldMessage } from '../answer.js';
import type { VatTransactionTypeInfo } from './reference-data.js';
import { applyVatRules, type VatSubmission } from './rules.js';

/**
 * VAT submission as the service answers it: the request table and the ten rules (rules.ts), rule 7
 * against what is stored, and the findings the service reports as warnings (docs/decisions.md,
 * Emulator). Pure: what it needs is passed in.
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
      value: VatSubmission;
      type: VatTransactionTypeInfo;
      /** Data findings that do not block (validity_status warning). */
      validity: FieldErrors;
      /** Compliance findings that do not block (compliance_status warning). */
      compliance: FieldErrors;
    };

export function validateVatSubmission(raw: unknown, ctx: VatValidationContext): VatValidation {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, status: 400, error: 'invalid request data: the body must be a JSON object', details: {} };
  }
  const { errors, notes: validity, parsed } = applyVatRules(raw as Record<string, unknown>, {
    today: ctx.today,
    tolerance: ctx.tolerance,
    isKnownType: (id) => ctx.types.has(id),
    unknownField: unknownFieldMessage,
  });
  const add = (to: FieldErrors, field: string, message: string) => void (to[field] ??= []).push(message);

  // Rule 7.
  if (parsed.entity_jurisdiction !== undefined && parsed.invoice_number !== undefined && ctx.isDuplicate(parsed.entity_jurisdiction, parsed.invoice_number)) {
    add(errors, 'invoice_number', `invoice_number ${parsed.invoice_number} already exists for entity jurisdiction ${parsed.entity_jurisdiction}`);
  }
  if (Object.keys(errors).length > 0) return { ok: false, status: 422, error: 'validation failed', details: errors };

  // No error means every required field parsed.
  const request = parsed as VatSubmission;
  const type = ctx.types.get(request.transaction_type_id) as VatTransactionTypeInfo;
  const compliance: FieldErrors = {};
  if (type.b2b && !request.vat_number) {
    add(compliance, 'vat_number', `no vat_number on a ${type.name} transaction: the partner's VAT number is expected`);
  }
  if (type.intraEu && request.vat_rate_type !== 'zero_rated') {
    add(compliance, 'vat_rate_type', `${type.name} are normally zero_rated, not ${request.vat_rate_type}`);
  }
  if (type.intraEu && !EU_STATES.has(request.partner_country)) {
    add(compliance, 'partner_country', `${type.name} need a partner in another EU member state; ${request.partner_country} is not one`);
  }
  if ((request.vat_rate_type === 'zero_rated' || request.vat_rate_type === 'exempt') && !new Dec(request.vat_rate).isZero()) {
    add(compliance, 'vat_rate', `vat_rate_type ${request.vat_rate_type} with a non-zero vat_rate ${request.vat_rate}`);
  }
  if (!ctx.isKnownEntityJurisdiction(request.entity_jurisdiction)) {
    add(compliance, 'entity_jurisdiction', `${request.entity_jurisdiction} is not a registered entity jurisdiction (create a registration first)`);
  }
  return { ok: true, value: request, type, validity, compliance };
}
