/**
 * PURE mapping: canonical events → tax-engine request bodies (docs/mapping.md). No I/O here: the
 * processors pass in what a mapper needs (settings, the original of a refund, engine ids).
 */
export { DEFAULT_MAPPING_SETTINGS, MappingSettings, type MappingSettingsInput } from './settings.js';
export type { MapResult, MappingContext, NotSent, RefundMapResult } from './result.js';
export { customerStatus, customerType, mapCustomer } from './customer.js';
export { mapInvoice, mapInvoiceCancelled, type InvoiceCancelContext } from './invoice.js';
export { mapRefund, mapRefundCancelled, type RefundCancelContext, type RefundContext } from './refund.js';
export {
  FRACTION_DECIMALS,
  exactFraction,
  invoiceAmount,
  refundBasis,
  type OriginalTransaction,
} from './refund-fraction.js';
export { mapExemption, mapExemptionCancelled, type ExemptionCancelContext, type ExemptionContext } from './exemption.js';
export { deletionFor, type Deletion } from './deletion.js';
