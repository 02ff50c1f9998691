/**
 * The tax engine's customers and their exemptions, and the pieces transactions share with them
 * (external id, address, customer type). tax-engine.ts has the decisions where the document says
 * "not shown".
 */
import { z } from 'zod';
import { CountryCode, IsoDate, IsoDateTime, SourceValue, Uuid } from './common.js';

// ---------------------------------------------------------------------------------------------
// Shared pieces

/** Caller-side identifier; with `source` the unique key of customers and transactions. */
export const ExternalId = z.string().min(1);
export type ExternalId = z.infer<typeof ExternalId>;

const addressFields = {
  street: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
  country: CountryCode.optional(),
};

/** Address in a request body. */
export const AddressRequest = z.strictObject(addressFields);
export type AddressRequest = z.infer<typeof AddressRequest>;

/** Address in a response. */
export const Address = z.object(addressFields);
export type Address = z.infer<typeof Address>;

export const CUSTOMER_TYPES = ['retail', 'wholesale', 'retail_exempt', 'marketplace'] as const;
/** Tax treatment of a customer. */
export const CustomerType = z.enum(CUSTOMER_TYPES);
export type CustomerType = z.infer<typeof CustomerType>;

// ---------------------------------------------------------------------------------------------
// Customers

const customerAddresses = <A extends z.ZodType>(address: A) => ({
  billing: address.optional(),
  shipping: address.optional(),
});

const customerFields = {
  source: SourceValue,
  external_id: ExternalId,
  name: z.string().optional(),
  email: z.string().optional(),
  tax_number: z.string().optional(),
  customer_type: CustomerType.optional(),
  customer_status: z.string().optional(),
  comment: z.string().optional(),
  external_created_at: IsoDateTime.optional(),
  external_updated_at: IsoDateTime.optional(),
};

/** Body of `PUT /v1/customers/` (upsert by source + external_id). */
export const CustomerRequest = z.strictObject({
  ...customerFields,
  addresses: z.strictObject(customerAddresses(AddressRequest)).optional(),
});
export type CustomerRequest = z.infer<typeof CustomerRequest>;

/** A customer as the contract documents it (the drift detector's reference; taxsync reads `Customer`, tax-answers.ts). */
export const CustomerContract = z.object({
  ...customerFields,
  id: Uuid,
  addresses: z.object(customerAddresses(Address)).optional(),
  created_at: IsoDateTime.optional(),
  updated_at: IsoDateTime.optional(),
});
export type CustomerContract = z.infer<typeof CustomerContract>;

// ---------------------------------------------------------------------------------------------
// Exemptions

export const EXEMPTION_TYPES = ['full', 'partial'] as const;
export const ExemptionType = z.enum(EXEMPTION_TYPES);
export type ExemptionType = z.infer<typeof ExemptionType>;

export const EXEMPTION_STATUSES = ['active', 'cancelled'] as const;
export const ExemptionStatus = z.enum(EXEMPTION_STATUSES);
export type ExemptionStatus = z.infer<typeof ExemptionStatus>;

/** Body of `POST /v1/exemptions/` and `PUT /v1/exemptions/{id}`. */
export const ExemptionRequest = z.strictObject({
  customer_id: Uuid,
  country: CountryCode,
  /** Empty array: every jurisdiction of the country. */
  jurisdictions: z.array(z.string()).optional(),
  start_date: IsoDate,
  /** null: no expiration. */
  end_date: IsoDate.nullable().optional(),
  certificate_id: Uuid.optional(),
  exemption_type: ExemptionType,
  exemption_status: ExemptionStatus.optional(),
});
export type ExemptionRequest = z.infer<typeof ExemptionRequest>;

/** An exemption as the contract documents it (taxsync reads `Exemption`, tax-answers.ts). */
export const ExemptionContract = z.object(ExemptionRequest.shape).partial().extend({ id: Uuid });
export type ExemptionContract = z.infer<typeof ExemptionContract>;
