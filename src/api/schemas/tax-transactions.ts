/**
 * The tax engine's transactions: line items, nested objects, the request and the documented answer.
 * tax-engine.ts has the decisions where the document says "not shown".
 */
import { z } from 'zod';
import { CurrencyCode, DecimalString, IsoDateTime, SourceValue, Uuid } from './common.js';
import { Address, AddressRequest, CustomerContract, CustomerRequest, CustomerType, ExternalId } from './tax-customers.js';

// ---------------------------------------------------------------------------------------------
// Transactions: line items

const itemFields = {
  name: z.string().optional(),
  description: z.string().optional(),
  tax_code: z.string().optional(),
  /** May be negative for credit lines. */
  unit_price: DecimalString,
  quantity: DecimalString.optional(),
  /** Item-level discount amount. */
  discount: DecimalString.optional(),
  /** Single override rate as a fraction (0.0825 = 8.25%); bypasses automatic calculation. */
  manual_sales_tax_rate: DecimalString.optional(),
  /** Per-jurisdiction override rates as fractions, keyed e.g. `state`, `city`. */
  manual_sales_tax_rates: z.record(z.string(), DecimalString).optional(),
  exemption_id: Uuid.optional(),
  exemption_reason: z.string().optional(),
};

/** A line item in a transaction request. `lineAmount` was removed from the API and is rejected. */
export const TransactionItemRequest = z.strictObject(itemFields, {
  error: (issue) =>
    issue.code === 'unrecognized_keys' && issue.keys.includes('lineAmount')
      ? `Unrecognized key(s): ${issue.keys.map((k) => `"${k}"`).join(', ')} (lineAmount was removed; the line amount is unit_price × quantity)`
      : undefined,
});
export type TransactionItemRequest = z.infer<typeof TransactionItemRequest>;

export const TANGIBLE_CATEGORIES = ['tangible', 'intangible'] as const;
export const TangibleCategory = z.enum(TANGIBLE_CATEGORIES);
export type TangibleCategory = z.infer<typeof TangibleCategory>;

export const TAXABLE_CATEGORIES = ['taxable', 'not_taxable'] as const;
export const TaxableCategory = z.enum(TAXABLE_CATEGORIES);
export type TaxableCategory = z.infer<typeof TaxableCategory>;

/** The taxability reasons the spec lists; responses may carry others. */
export const TAXABILITY_REASONS = [
  'standard_rated',
  'zero_rated',
  'reduced_rated',
  'product_exempt',
  'customer_exempt',
  'reverse_charge',
  'not_collecting',
  'not_subject_to_tax',
] as const;
export const TaxabilityReason = z.enum(TAXABILITY_REASONS);
export type TaxabilityReason = z.infer<typeof TaxabilityReason>;

/** Tax summary of an item or of the whole transaction (read-only). */
export const TaxSummary = z.object({
  /** Items plus shipping fee, at transaction level. */
  total_tax: DecimalString.optional(),
  /** Blended rate. */
  effective_tax_rate: DecimalString.optional(),
});
export type TaxSummary = z.infer<typeof TaxSummary>;

/** One jurisdiction's entry in a tax breakdown (read-only). */
export const JurisdictionTax = z.object({
  jurisdiction_type: z.string().optional(),
  gross_sales: DecimalString.optional(),
  taxable_amount: DecimalString.optional(),
  non_taxable_amount: DecimalString.optional(),
  tax_rate: DecimalString.optional(),
  tax_due: DecimalString.optional(),
});
export type JurisdictionTax = z.infer<typeof JurisdictionTax>;

/** Breakdown keyed by jurisdiction level (`state`, `county`, `city`, `mta`, `spd`). */
export const JurisdictionTaxBreakdown = z.record(z.string(), JurisdictionTax);
export type JurisdictionTaxBreakdown = z.infer<typeof JurisdictionTaxBreakdown>;

/** A line item as returned, with its computed read-only fields. */
export const TransactionItem = z
  .object(itemFields)
  .partial()
  .extend({
    /** unit_price × quantity. */
    total_price: DecimalString.optional(),
    /** Final taxable base after all discounts. */
    total_price_after_discount: DecimalString.optional(),
    /** Share of the transaction-level discount allocated to this item. */
    relative_transaction_discount: DecimalString.optional(),
    tangible_category: TangibleCategory.optional(),
    taxable_category: TaxableCategory.optional(),
    /** The spec's list is "not shown beyond those listed": another value is drift, logged once. */
    taxability_reason: TaxabilityReason.optional(),
    is_exempt: z.boolean().optional(),
    tax: TaxSummary.optional(),
    jurisdiction_tax_breakdown: JurisdictionTaxBreakdown.optional(),
    /** Present only when manual_sales_tax_rates was submitted. */
    manual_jurisdiction_tax_breakdown: JurisdictionTaxBreakdown.optional(),
  });
export type TransactionItem = z.infer<typeof TransactionItem>;

// ---------------------------------------------------------------------------------------------
// Transactions: nested objects

const currencyFields = {
  currency: CurrencyCode,
  /** Omitted: the service fetches the rate. */
  manual_exchange_rate: DecimalString.optional(),
};

/** currency_details in a request. */
export const CurrencyDetailsRequest = z.strictObject(currencyFields);
export type CurrencyDetailsRequest = z.infer<typeof CurrencyDetailsRequest>;

/** currency_details in a response. */
export const CurrencyDetails = z
  .object(currencyFields)
  .partial()
  .extend({ exchange_rate_info: z.looseObject({}).nullable().optional() });
export type CurrencyDetails = z.infer<typeof CurrencyDetails>;

const refundInfoFields = {
  is_refund_linked: z.boolean(),
  /**
   * Decimal fraction of the original refunded, not a percentage (0.5 = 50%, 1.0 = full).
   * The (0, 1] range is checked by mapping and the emulator, not here.
   */
  refund_linked_percentage: DecimalString.optional(),
};

/** refund_info in a request. */
export const RefundInfoRequest = z.strictObject(refundInfoFields);
export type RefundInfoRequest = z.infer<typeof RefundInfoRequest>;

/** refund_info in a response. */
export const RefundInfo = z.object(refundInfoFields).partial();
export type RefundInfo = z.infer<typeof RefundInfo>;

const NumberLike = z.union([z.number(), DecimalString]);

/** The granularities the spec gives as examples of match_level. */
export const MATCH_LEVELS = ['street', 'city', 'zip', 'state', 'unmatched'] as const;
export const MatchLevel = z.enum(MATCH_LEVELS);
export type MatchLevel = z.infer<typeof MatchLevel>;

/** Geocoding result on the shipping address of a response (read-only). */
export const MatchedAddress = z.object({
  address: Address.nullable().optional(),
  /** null when the address could not be geocoded (match_level unmatched). */
  latitude: NumberLike.nullable().optional(),
  longitude: NumberLike.nullable().optional(),
  /** 1.0 = exact; below 0.7 sets low_confidence_warning. */
  confidence: NumberLike.nullable().optional(),
  /** e.g. street, city, zip, state, unmatched: another value is drift, logged once. */
  match_level: MatchLevel.optional(),
  address_corrected: z.boolean().optional(),
  low_confidence_warning: z.boolean().optional(),
});
export type MatchedAddress = z.infer<typeof MatchedAddress>;

const transactionAddresses = <A extends z.ZodType, S extends z.ZodType>(address: A, shipping: S) => ({
  billing: address.optional(),
  shipping: shipping.optional(),
  /** Used when origin-based rules apply. */
  shipping_from: address.optional(),
  supplier: address.optional(),
});

/** addresses of a transaction request. */
export const TransactionAddressesRequest = z.strictObject(transactionAddresses(AddressRequest, AddressRequest));
export type TransactionAddressesRequest = z.infer<typeof TransactionAddressesRequest>;

/** addresses of a transaction response; shipping carries matched_address. */
export const TransactionAddresses = z.object(
  transactionAddresses(Address, Address.extend({ matched_address: MatchedAddress.optional() })),
);
export type TransactionAddresses = z.infer<typeof TransactionAddresses>;

/** Inline customer in customer_details; upserted with the transaction. */
export const InlineCustomerRequest = CustomerRequest.pick({
  external_id: true,
  source: true,
  name: true,
  external_created_at: true,
  external_updated_at: true,
});
export type InlineCustomerRequest = z.infer<typeof InlineCustomerRequest>;

/** customer_details of a request: by internal id, by (source, external_id), or inline. */
export const CustomerDetailsRequest = z.union([
  z.strictObject({ customer_id: Uuid }),
  z.strictObject({ customer_external_id: ExternalId, customer_source: SourceValue }),
  z.strictObject({ customer: InlineCustomerRequest }),
], { error: 'customer_details must be exactly one of {customer_id}, {customer_external_id, customer_source} or {customer}' });
export type CustomerDetailsRequest = z.infer<typeof CustomerDetailsRequest>;

/** customer_details of a response. */
export const CustomerDetails = z.object({
  customer_id: Uuid.optional(),
  customer_external_id: ExternalId.optional(),
  customer_source: SourceValue.optional(),
  customer: CustomerContract.partial().optional(),
  customer_type_override: CustomerType.optional(),
});
export type CustomerDetails = z.infer<typeof CustomerDetails>;

/** Transaction totals (read-only). */
export const TransactionAmounts = z.object({
  /** Sum of item total_price_after_discount. */
  total_items_amount: DecimalString.optional(),
  taxable_items_amount: DecimalString.optional(),
  tangible_items_amount: DecimalString.optional(),
  non_taxable_amount: DecimalString.optional(),
  /** Total after all discounts. */
  final_transaction_amount: DecimalString.optional(),
  /** Aggregate of item-level discounts. */
  total_discount: DecimalString.optional(),
  /** Transaction-wide discount distributed pro rata. */
  transaction_level_discount: DecimalString.optional(),
});
export type TransactionAmounts = z.infer<typeof TransactionAmounts>;

// ---------------------------------------------------------------------------------------------
// Transactions

export const KNOWN_TRANSACTION_TYPES = ['invoice', 'refund'] as const;

export const TRANSACTION_STATUSES = ['active', 'paid', 'cancelled'] as const;
export const TransactionStatus = z.enum(TRANSACTION_STATUSES);
export type TransactionStatus = z.infer<typeof TransactionStatus>;

const transactionFields = {
  source: SourceValue,
  external_id: ExternalId,
  /** Issue date; used for exemption validity checks. */
  transaction_date: IsoDateTime.optional(),
  document_name: z.string().optional(),
  is_tax_inclusive: z.boolean().optional(),
  transaction_status: TransactionStatus.optional(),
  /** Distributed pro rata over the items. */
  transaction_level_discount: DecimalString.optional(),
  /** For a linked refund: the original transaction's id. */
  created_from: z.string().nullable().optional(),
  external_created_at: IsoDateTime.optional(),
  external_updated_at: IsoDateTime.optional(),
  /** true: skip nexus threshold checks and calculate regardless. */
  override_threshold: z.boolean().optional(),
};

/**
 * Shipping charged on a transaction. Fields not shown in the spec: decided in docs/decisions.md
 * (amount before tax and after shipping discounts; tax_code to classify it, e.g. a freight code).
 */
export const ShippingFeeRequest = z.strictObject({
  amount: DecimalString,
  tax_code: z.string().optional(),
});
export type ShippingFeeRequest = z.infer<typeof ShippingFeeRequest>;

/** Body of `PUT /v1/transactions/` (upsert by source + external_id). */
export const TransactionRequest = z.strictObject({
  ...transactionFields,
  /** Lowercase; `invoice` and `refund` are the known values. */
  transaction_type: z.string().regex(/^[a-z][a-z0-9_]*$/, 'expected a lowercase transaction type').optional(),
  currency_details: CurrencyDetailsRequest.optional(),
  refund_info: RefundInfoRequest.optional(),
  addresses: TransactionAddressesRequest.optional(),
  customer_details: CustomerDetailsRequest.optional(),
  items: z.array(TransactionItemRequest).optional(),
  shipping_fee: ShippingFeeRequest.nullable().optional(),
});
export type TransactionRequest = z.infer<typeof TransactionRequest>;

/** A transaction as the contract documents it, with the computed tax (taxsync reads `Transaction`, tax-answers.ts). */
export const TransactionContract = z.object({
  ...transactionFields,
  id: Uuid,
  tenant_id: Uuid.optional(),
  transaction_type: z.string().optional(),
  created_at: IsoDateTime.optional(),
  updated_at: IsoDateTime.optional(),
  currency_details: CurrencyDetails.optional(),
  refund_info: RefundInfo.optional(),
  addresses: TransactionAddresses.optional(),
  customer_details: CustomerDetails.optional(),
  items: z.array(TransactionItem).optional(),
  shipping_fee: z.looseObject({}).nullable().optional(),
  tax: TaxSummary.optional(),
  amounts: TransactionAmounts.optional(),
});
export type TransactionContract = z.infer<typeof TransactionContract>;
