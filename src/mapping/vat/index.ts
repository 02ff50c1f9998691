/**
 * VAT mapping (docs/vat.md), PURE, split by concern: which invoices and where their VAT belongs
 * (supply), dates, amounts, rates, transaction types, the body (submission) and what a change after
 * filing means (corrections).
 */
export { KIND_LABEL, chooseRegistration, classifySupply, inVatScope, shouldSubmit, type Supply, type SupplyDecision, type SupplyKind } from './supply.js';
export { addDays, invoiceDate, reportingPeriod, reportingPeriodRange } from './dates.js';
export { groupAmounts, type VatGroup } from './amounts.js';
export { transactionTypeId, transactionTypeName, type TransactionTypeRef } from './transaction-types.js';
export { baseInvoiceNumber, checkBody, mapVatSubmission, splitInvoiceNumber, type VatMappingContext } from './submission.js';
export {
  amountsOf,
  describeCorrections,
  planVat,
  refundCorrection,
  undoCorrection,
  supplementNumber,
  type Amounts,
  type FiledSubmission,
  type PartCorrection,
  type SubmissionCorrection,
  type PlannedSubmission,
  type VatPlan,
  type VatPlanInput,
} from './corrections.js';
