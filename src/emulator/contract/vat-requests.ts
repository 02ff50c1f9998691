import { z } from 'zod';
import { CalendarDate, Id } from './primitives.js';

/**
 * Registration and filing bodies as the emulator reads vat-compliance-api.md. The VAT transaction
 * body is read field by field in ../vat/rules.ts, since the service answers each field apart.
 */

export const REGISTRATION_TYPE_VALUES = [
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
export type RegistrationKind = (typeof REGISTRATION_TYPE_VALUES)[number];

export const FISCAL_REPRESENTATIVE_VALUES = ['agent', 'not_required', 'managed_service_provider'] as const;
export type FiscalRepresentative = (typeof FISCAL_REPRESENTATIVE_VALUES)[number];

export const PAYMENT_RESPONSIBLE_VALUES = ['client_direct_debit', 'client_manual_payment', 'managed_service_provider_direct_debit'] as const;
export type PaymentResponsible = (typeof PAYMENT_RESPONSIBLE_VALUES)[number];

export type RegistrationState = 'pending' | 'active' | 'inactive';

export const ORDER_BY_VALUES = ['entity_name', 'fiscal_code', 'number', 'date_of_filing_start', 'date_of_registration', 'date_registration_closed'] as const;

/** The create table: taxable_jurisdiction and entity required, the rest optional with their limits. */
export const RegistrationBody = z.strictObject({
  taxable_jurisdiction: z.string().trim().min(1),
  entity: Id,
  number: z.string().max(20).optional(),
  number_local: z.string().max(20).optional(),
  fiscal_code: z.string().max(16).optional(),
  date_of_registration: CalendarDate.optional(),
  /** "date or null". */
  date_registration_closed: CalendarDate.nullable().optional(),
  date_of_filing_start: CalendarDate.optional(),
  fiscal_representative_type: z.enum(FISCAL_REPRESENTATIVE_VALUES).optional(),
  registration_type: z.enum(REGISTRATION_TYPE_VALUES).optional(),
  direct_debit_setup: z.boolean().optional(),
  entity_responsible_for_payment: z.enum(PAYMENT_RESPONSIBLE_VALUES).optional(),
  iban: z.string().max(35).optional(),
});
export type RegistrationBody = z.infer<typeof RegistrationBody>;

/** PATCH: any subset of the create fields (docs/decisions.md). */
export const RegistrationPatchBody = RegistrationBody.partial();

export const FILING_STATUS_VALUES = ['draft', 'pending_approval', 'approved', 'submitted', 'accepted', 'rejected'] as const;
export type FilingState = (typeof FILING_STATUS_VALUES)[number];

export const FilingBody = z.strictObject({
  registration_filing_type: Id,
  reporting_period_start: CalendarDate,
  reporting_period_end: CalendarDate,
});
export type FilingBody = z.infer<typeof FilingBody>;

export const ApproveBody = z.strictObject({ approved_by: z.string().optional(), approval_notes: z.string().optional() });

export const FILE_TYPE_VALUES = ['vat_return', 'submission_receipt', 'acknowledgment'] as const;
