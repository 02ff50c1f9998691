import { VatTransactionRequest } from '../../api/schemas/index.js';
import type { FieldErrors } from '../../domain/errors.js';
import { Money } from '../../domain/money.js';
import { EU_MEMBERS } from '../../domain/reference/countries.js';
import { checkVatTransaction } from '../../mapping/vat-validation.js';
import { unknownFieldMessage } from '../answer.js';
import type { VatTransactionTypeInfo } from './reference-data.js';

/**
 * VAT submission as the service answers it: the rules taxsync checks locally
 * (src/mapping/vat-validation.ts, the same function), plus what only the service knows — rule 7
 * (a duplicate invoice number) and the findings it reports as warnings (docs/decisions.md,
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
      value: VatTransactionRequest;
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
  const { errors, notes: validity, value: v } = checkVatTransaction(raw, {
    today: ctx.today,
    tolerance: ctx.tolerance,
    knownTypeIds: new Set(ctx.types.keys()),
    unknownField: unknownFieldMessage,
  });
  const compliance: FieldErrors = {};
  const add = (to: FieldErrors, field: string, message: string) => (to[field] ??= []).push(message);

  // Rule 7.
  if (v.entity_jurisdiction !== undefined && v.invoice_number !== undefined && ctx.isDuplicate(v.entity_jurisdiction, v.invoice_number)) {
    add(errors, 'invoice_number', `invoice_number ${v.invoice_number} already exists for entity jurisdiction ${v.entity_jurisdiction}`);
  }
  if (Object.keys(errors).length > 0) return { ok: false, status: 422, error: 'validation failed', details: errors };

  const request = VatTransactionRequest.parse(v);
  const found = ctx.types.get(request.transaction_type_id) as VatTransactionTypeInfo;
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
