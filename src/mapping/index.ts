/**
 * PURE mapping: canonical events → tax-engine request bodies (docs/mapping.md) and VAT
 * submissions with their local validation (docs/vat.md). No I/O here: the
 * processors pass in what a mapper needs (settings, the original of a refund, engine ids).
 */
export { DEFAULT_MAPPING_SETTINGS, MappingSettings, type MappingSettingsInput } from './settings.js';
export type { MapResult, MappingContext, NotSent, RefundMapResult } from './result.js';
export { customerStatus, customerType, mapCustomer, mapCustomerFacts, mapInvoiceCustomer, type DatedFacts, type InvoiceCustomerContext } from './customer.js';
export { cancelledInvoice, mapInvoice, mapInvoiceCancelled, type InvoiceCancelContext } from './invoice.js';
export { cancelledRefund, mapRefund, mapRefundCancelled, netAmount, type RefundCancelContext, type RefundContext } from './refund.js';
export {
  FRACTION_DECIMALS,
  exactFraction,
  invoiceAmount,
  refundBasis,
  type OriginalTransaction,
} from './refund-fraction.js';
export { mapExemption, mapExemptionCancelled, type ExemptionCancelContext, type ExemptionContext } from './exemption.js';
export { deletionFor, type Deletion } from './deletion.js';
export {
  DEFAULT_VAT_SETTINGS,
  VatRegistration,
  VatSettings,
  matchRegistration,
  registrationRef,
  vatEnabled,
  type RegistrationMatch,
  type ReportingPeriod,
  type SubmitWhen,
  type VatScheme,
  type VatSettingsInput,
} from './vat-settings.js';
export {
  chooseRegistration,
  classifySupply,
  checkBody,
  describeCorrections,
  inVatScope,
  mapVatSubmission,
  planVat,
  refundCorrection,
  undoCorrection,
  reportingPeriod,
  reportingPeriodRange,
  shouldSubmit,
  type FiledSubmission,
  type PartCorrection,
  type SubmissionCorrection,
  type Supply,
  type SupplyKind,
  type TransactionTypeRef,
  type VatMappingContext,
  type VatPlan,
} from './vat/index.js';
export { checkVatTransaction, validateVatTransaction, type VatCheck, type VatValidationOptions } from './vat-validation.js';
