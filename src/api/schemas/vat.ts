/**
 * VAT compliance contract (spec/vat-compliance-api.md): VAT transactions, transaction types,
 * registrations, filings and error bodies. Requests are strict (unknown keys rejected): taxsync is
 * strict in what it sends. The response schemas (`*Contract`) describe the answers as documented;
 * they never refuse an answer, only detect drift (src/api/drift.ts). What taxsync reads from each
 * answer is in vat-answers.ts (docs/decisions.md, "Reading answers").
 *
 * The schemas check shape and the spec's string limits only. The numbered validation rules
 * (net + vat = gross, vat = net × rate, at most 2 decimals, net positive, date not in the future,
 * vat_number format, real ISO codes, unique invoice number, known type) belong to local VAT
 * validation and to the emulator, which answer them as 422 field errors.
 *
 * Decisions where the spec says "not shown" (copy to docs/decisions.md):
 * - Transaction types list: a bare array, `{results: [...]}` or `{data: [...]}`, normalised to an
 *   array; a type is `{id, name, description?}`.
 * - VAT transaction request strings are trimmed before the length checks (the service trims);
 *   `source` is any non-empty string, as the spec types it.
 * - Registration PUT body = the create body (DRF-style full update); PATCH body = the same,
 *   every field optional. PUT/PATCH answer with the Registration representation.
 * - Registration dates: date_registration_closed may be null (spec); date_of_registration and
 *   date_of_filing_start may be null in responses ("empty" in the status table).
 * - taxable_jurisdiction in the create body is any non-empty ISO code (country or subdivision).
 * - Registration list has no page-size/page parameters; follow `next`.
 * - Filing submitted_date and filing_reference may be null (a draft has neither).
 * - Filing approve response: not shown, so any body (or none) is accepted; re-read the filing.
 * - VAT error body: `details` defaults to {} when absent (401/403/500 bodies may lack it).
 */
import { z } from 'zod';
import { CountryCode, CurrencyCode, DecimalString, IsoDate, IsoDateTime, Uuid } from './common.js';

// ---------------------------------------------------------------------------------------------
// VAT transactions

export const VAT_RATE_TYPES = ['standard', 'reduced', 'zero_rated', 'exempt'] as const;
export const VatRateType = z.enum(VAT_RATE_TYPES);
export type VatRateType = z.infer<typeof VatRateType>;

export const VALIDATION_STATUSES = ['valid', 'warning', 'error'] as const;
/** validity_status (data checks) and compliance_status (compliance checks). */
export const ValidationStatus = z.enum(VALIDATION_STATUSES);
export type ValidationStatus = z.infer<typeof ValidationStatus>;

/** Body of `POST /api/vat/v1/transactions/`: one invoice or business transaction. */
export const VatTransactionRequest = z.strictObject({
  /** Registered entity jurisdiction. */
  entity_jurisdiction: Uuid,
  /** Unique per entity jurisdiction. */
  invoice_number: z.string().trim().min(1).max(255),
  /** Not in the future. */
  invoice_date: IsoDate,
  partner_name: z.string().trim().min(1).max(255),
  partner_country: CountryCode,
  /** Must match the partner country's format. */
  vat_number: z.string().trim().max(255).optional(),
  /** Positive. */
  net: DecimalString,
  vat: DecimalString,
  gross: DecimalString,
  /** A percentage: "19.00" means 19%. */
  vat_rate: DecimalString,
  vat_rate_type: VatRateType,
  currency: CurrencyCode,
  /** Start date of the reporting period. */
  reporting_period: IsoDate,
  /** An id from the transaction types list. */
  transaction_type_id: Uuid,
  /** Source system identifier. */
  source: z.string().trim().min(1),
});
export type VatTransactionRequest = z.infer<typeof VatTransactionRequest>;

/** A VAT transaction as the contract documents the answer (201 created, or 200 processed with warnings). */
export const VatTransactionContract = z.object({
  ...VatTransactionRequest.pick({
    entity_jurisdiction: true,
    partner_name: true,
    net: true,
    vat: true,
    gross: true,
  })
    .partial()
    .shape,
  id: Uuid,
  invoice_number: z.string(),
  validity_status: ValidationStatus.optional(),
  compliance_status: ValidationStatus.optional(),
  /** Whether the transaction is committed to reporting. */
  committed: z.boolean().optional(),
  created_at: IsoDateTime.optional(),
});
export type VatTransactionContract = z.infer<typeof VatTransactionContract>;

/** One entry of `GET /api/vat/v1/transaction-types/` (e.g. "B2B Sales", "Intra-EU Supplies"). */
export const VatTransactionTypeContract = z.object({
  id: Uuid,
  name: z.string(),
  description: z.string().optional(),
});
export type VatTransactionTypeContract = z.infer<typeof VatTransactionTypeContract>;

const vatTransactionTypeArray = z.array(VatTransactionTypeContract);

/**
 * The transaction types list in any of its accepted shapes: a bare array, `{results}` (with the
 * count and links of a page, as the registration list has them) or `{data}`.
 */
export const VatTransactionTypeListContract = z.union([
  vatTransactionTypeArray,
  z.object({
    count: z.number().int().nonnegative().optional(),
    next: z.url().nullable().optional(),
    previous: z.url().nullable().optional(),
    results: vatTransactionTypeArray,
  }),
  z.object({ data: vatTransactionTypeArray }),
]);

// ---------------------------------------------------------------------------------------------
// Registrations

export const REGISTRATION_TYPES = [
  'standard',
  'one_stop_shop',
  'import_one_stop_shop',
  'mini_one_stop_shop',
  'sales_tax_registration',
  'digital_service_tax_registration',
  'lease_tax_registration',
  'suts_registration',
  'property_lease_tax_registration',
  'arsstc_registration',
] as const;
export const RegistrationType = z.enum(REGISTRATION_TYPES);
export type RegistrationType = z.infer<typeof RegistrationType>;

export const FISCAL_REPRESENTATIVE_TYPES = ['agent', 'not_required', 'managed_service_provider'] as const;
export const FiscalRepresentativeType = z.enum(FISCAL_REPRESENTATIVE_TYPES);
export type FiscalRepresentativeType = z.infer<typeof FiscalRepresentativeType>;

export const PAYMENT_RESPONSIBILITIES = [
  'client_direct_debit',
  'client_manual_payment',
  'managed_service_provider_direct_debit',
] as const;
export const EntityResponsibleForPayment = z.enum(PAYMENT_RESPONSIBILITIES);
export type EntityResponsibleForPayment = z.infer<typeof EntityResponsibleForPayment>;

export const REGISTRATION_STATUSES = ['pending', 'active', 'inactive'] as const;
/** Computed from the registration dates; never written. */
export const RegistrationStatus = z.enum(REGISTRATION_STATUSES);
export type RegistrationStatus = z.infer<typeof RegistrationStatus>;

const registrationFields = {
  number: z.string().max(20).optional(),
  number_local: z.string().max(20).optional(),
  fiscal_code: z.string().max(16).optional(),
  /** When the registration became active. */
  date_of_registration: IsoDate.optional(),
  /** Setting it triggers deregistration. */
  date_registration_closed: IsoDate.nullable().optional(),
  date_of_filing_start: IsoDate.optional(),
  fiscal_representative_type: FiscalRepresentativeType.optional(),
  /** Omitted at creation: the service's model default. */
  registration_type: RegistrationType.optional(),
  direct_debit_setup: z.boolean().optional(),
  entity_responsible_for_payment: EntityResponsibleForPayment.optional(),
  iban: z.string().max(35).optional(),
};

/** Body of `POST /registrations/v1/registrations/`. */
export const RegistrationCreateRequest = z.strictObject({
  /** ISO code of the jurisdiction. */
  taxable_jurisdiction: z.string().min(1),
  entity: Uuid,
  ...registrationFields,
});
export type RegistrationCreateRequest = z.infer<typeof RegistrationCreateRequest>;

/** Body of `PUT /registrations/v1/registrations/{id}/` (full update). */
export const RegistrationUpdateRequest = RegistrationCreateRequest;
export type RegistrationUpdateRequest = z.infer<typeof RegistrationUpdateRequest>;

/** Body of `PATCH /registrations/v1/registrations/{id}/`. */
export const RegistrationPatchRequest = RegistrationCreateRequest.partial();
export type RegistrationPatchRequest = z.infer<typeof RegistrationPatchRequest>;

/** A registration as the contract documents it; number, number_local and fiscal_code are "" when never supplied. */
export const RegistrationContract = z.object({
  ...registrationFields,
  id: Uuid,
  /** Created automatically at registration creation when absent. */
  entity_jurisdiction: Uuid.optional(),
  taxable_jurisdiction_detail: z.object({ id: Uuid, name: z.string(), iso: z.string() }).partial().optional(),
  entity_detail: z.object({ id: Uuid, name: z.string() }).partial().optional(),
  date_of_registration: IsoDate.nullable().optional(),
  date_of_filing_start: IsoDate.nullable().optional(),
  registration_type: RegistrationType,
  // Read back leniently: a choice never set may come back null, and lengths are the service's to enforce.
  number: z.string().nullable().optional(),
  number_local: z.string().nullable().optional(),
  fiscal_code: z.string().nullable().optional(),
  iban: z.string().nullable().optional(),
  fiscal_representative_type: FiscalRepresentativeType.nullable().optional(),
  entity_responsible_for_payment: EntityResponsibleForPayment.nullable().optional(),
  registration_type_display: z.string().optional(),
  fiscal_representative_type_display: z.string().optional(),
  status: RegistrationStatus.optional(),
  status_display: z.string().optional(),
  entity_responsible_for_payment_display: z.string().optional(),
  created_at: IsoDateTime.optional(),
  updated_at: IsoDateTime.optional(),
});
export type RegistrationContract = z.infer<typeof RegistrationContract>;

/** A page of `GET /registrations/v1/registrations/`. */
export const RegistrationPageContract = z.object({
  count: z.number().int().nonnegative(),
  next: z.url().nullable(),
  previous: z.url().nullable(),
  results: z.array(RegistrationContract),
});
export type RegistrationPageContract = z.infer<typeof RegistrationPageContract>;

export const REGISTRATION_ORDER_FIELDS = [
  'entity_name',
  'fiscal_code',
  'number',
  'date_of_filing_start',
  'date_of_registration',
  'date_registration_closed',
] as const;
/** A sort field, prefixed with `-` for descending order. */
export const RegistrationOrderBy = z.templateLiteral([z.enum(['', '-']), z.enum(REGISTRATION_ORDER_FIELDS)]);
export type RegistrationOrderBy = z.infer<typeof RegistrationOrderBy>;

/** Filters of `GET /registrations/v1/registrations/`. */
export const RegistrationListQuery = z.strictObject({
  /** Matches number and number_local. */
  number: z.string().optional(),
  entity: Uuid.optional(),
  taxable_jurisdiction: Uuid.optional(),
  entity_jurisdiction: Uuid.optional(),
  order_by: RegistrationOrderBy.optional(),
});
export type RegistrationListQuery = z.infer<typeof RegistrationListQuery>;

// ---------------------------------------------------------------------------------------------
// Filings

export const FILING_STATUSES = ['draft', 'pending_approval', 'approved', 'submitted', 'accepted', 'rejected'] as const;
export const FilingStatus = z.enum(FILING_STATUSES);
export type FilingStatus = z.infer<typeof FilingStatus>;

/** A VAT return for one reporting period, as the contract documents it. */
export const FilingContract = z.object({
  id: Uuid,
  status: FilingStatus.optional(),
  due_date: IsoDate.optional(),
  submitted_date: IsoDateTime.nullable().optional(),
  filing_reference: z.string().nullable().optional(),
  total_vat_due: DecimalString.optional(),
  total_net: DecimalString.optional(),
  currency: CurrencyCode.optional(),
  // Not in the spec's field table; read when the service sends them (the emulator does), so
  // `vat reconcile` compares a filing with its own entity jurisdiction's submissions.
  entity_jurisdiction: Uuid.optional(),
  reporting_period_start: IsoDate.optional(),
  reporting_period_end: IsoDate.optional(),
});
export type FilingContract = z.infer<typeof FilingContract>;

/** Body of `POST /api/filing/v1/filings/`. */
export const FilingCreateRequest = z.strictObject({
  registration_filing_type: Uuid,
  reporting_period_start: IsoDate,
  reporting_period_end: IsoDate,
});
export type FilingCreateRequest = z.infer<typeof FilingCreateRequest>;

export const FILE_TYPES = ['vat_return', 'submission_receipt', 'acknowledgment'] as const;
export const FileType = z.enum(FILE_TYPES);
export type FileType = z.infer<typeof FileType>;

/** A file attached to a filing, as the contract documents it. */
export const FilingFileContract = z.object({
  id: Uuid,
  file_type: FileType.optional(),
  filename: z.string().optional(),
  download_url: z.url().optional(),
  created_at: IsoDateTime.optional(),
});
export type FilingFileContract = z.infer<typeof FilingFileContract>;

/** `GET /api/filing/v1/filings/{id}/files/`. */
export const FilingFileListContract = z.object({ results: z.array(FilingFileContract) });

/** One box of a draft return, as the contract documents it. */
export const DraftReturnBoxContract = z.object({
  box_number: z.string(),
  description: z.string().optional(),
  value: DecimalString.optional(),
  currency: CurrencyCode.optional(),
});
export type DraftReturnBoxContract = z.infer<typeof DraftReturnBoxContract>;

/** `GET /api/filing/v1/filings/{id}/draft-return-boxes/`. */
export const DraftReturnBoxesContract = z.object({
  boxes: z.array(DraftReturnBoxContract),
  total_vat_due: DecimalString.optional(),
  reporting_period: z.string().optional(),
});
export type DraftReturnBoxesContract = z.infer<typeof DraftReturnBoxesContract>;

/** Body of `POST /api/filing/v1/filings/{id}/approve/`. */
export const FilingApproveRequest = z.strictObject({
  approved_by: z.string().optional(),
  approval_notes: z.string().optional(),
});
export type FilingApproveRequest = z.infer<typeof FilingApproveRequest>;

/** Response of the approve operation: not shown, so anything is accepted. */
export const FilingApproveResponse = z.unknown();
export type FilingApproveResponse = z.infer<typeof FilingApproveResponse>;

// ---------------------------------------------------------------------------------------------
// Error bodies

/** Error body of VAT transaction submission: `details` maps a field to its messages. */
export const VatErrorBody = z.object({
  error: z.string(),
  details: z.record(z.string(), z.array(z.string())).default({}),
});
export type VatErrorBody = z.infer<typeof VatErrorBody>;

/** Error body of the registration endpoints. */
export const RegistrationErrorBody = z.object({ detail: z.string() });
export type RegistrationErrorBody = z.infer<typeof RegistrationErrorBody>;
