import { z } from 'zod';
import { DECIMAL_PATTERN } from '../../domain/money.js';
import { LONE_SURROGATE, hasLoneSurrogate } from '../shared/fields.js';

/**
 * The parts of Stripe's event and object payloads that taxsync reads. Objects are loose: Stripe
 * adds fields in every API version. Both invoice shapes are accepted: the one before 2025-03-31
 * ("acacia" and older: `lines.data[].price`, `tax_amounts`, `total_tax_amounts`) and the
 * 2025-03-31 "basil" one (`lines.data[].pricing`, `taxes`, `total_taxes`, `parent`).
 * References: docs.stripe.com/api/invoices/object, /api/invoice-line-item/object,
 * /api/credit_notes/object, /api/customers/object; docs.stripe.com/changelog/basil.
 */

/** Stripe amounts are integers in the currency's minor unit (see currencies.ts). */
const MinorUnits = z.int({ error: 'must be an integer amount in minor units' });
const UnixSeconds = z.int({ error: 'must be a unix timestamp in seconds' }).nonnegative();
/** `*_decimal` fields: a decimal string in minor units (at most 12 decimals). */
const DecimalString = z.string().regex(DECIMAL_PATTERN, { error: 'must be a decimal string' });
const Id = z.string().min(1).refine((v) => !hasLoneSurrogate(v), { error: LONE_SURROGATE });
/** A reference that may be expanded into its object. */
const Ref = z.union([Id, z.looseObject({ id: Id })]);

export const StripeAddress = z.looseObject({
  line1: z.string().nullish(),
  line2: z.string().nullish(),
  city: z.string().nullish(),
  state: z.string().nullish(),
  postal_code: z.string().nullish(),
  country: z.string().nullish(),
});
export type StripeAddress = z.infer<typeof StripeAddress>;

const StripeShipping = z.looseObject({ address: StripeAddress.nullish(), name: z.string().nullish() });

const DiscountAmount = z.looseObject({ amount: MinorUnits });
const PretaxCreditAmount = z.looseObject({ amount: MinorUnits, type: z.string() });

/** Tax per rate before basil: `tax_amounts` / `total_tax_amounts`. */
const TaxAmount = z.looseObject({ amount: MinorUnits, inclusive: z.boolean(), taxable_amount: MinorUnits.nullish() });
/** Tax per rate since basil: `taxes` / `total_taxes`. */
const Tax = z.looseObject({
  amount: MinorUnits,
  tax_behavior: z.enum(['inclusive', 'exclusive']),
  taxable_amount: MinorUnits.nullish(),
});

const ShippingCost = z.looseObject({
  /** Before tax. */
  amount_subtotal: MinorUnits,
  amount_tax: MinorUnits.nullish(),
  /** After tax. */
  amount_total: MinorUnits.nullish(),
});

/** The Price object of an invoice line before basil (`line.price`). */
const Price = z.looseObject({
  id: Id.optional(),
  unit_amount: MinorUnits.nullish(),
  unit_amount_decimal: DecimalString.nullish(),
  tax_behavior: z.string().nullish(),
  product: Ref.nullish(),
});

/** `line.pricing` since basil. */
const Pricing = z.looseObject({
  type: z.string().optional(),
  price_details: z.looseObject({ price: z.string().nullish(), product: z.string().nullish() }).nullish(),
  unit_amount_decimal: DecimalString.nullish(),
});

export const StripeInvoiceLine = z.looseObject({
  id: Id.optional(),
  amount: MinorUnits,
  description: z.string().nullish(),
  quantity: z.int().nullish(),
  quantity_decimal: DecimalString.nullish(),
  price: Price.nullish(),
  pricing: Pricing.nullish(),
  discount_amounts: z.array(DiscountAmount).nullish(),
  pretax_credit_amounts: z.array(PretaxCreditAmount).nullish(),
  tax_amounts: z.array(TaxAmount).nullish(),
  taxes: z.array(Tax).nullish(),
});
export type StripeInvoiceLine = z.infer<typeof StripeInvoiceLine>;

const Currency = z.string().regex(/^[A-Za-z]{3}$/, { error: 'must be a three-letter currency code' });

export const StripeInvoice = z.looseObject({
  id: Id,
  number: z.string().nullish(),
  status: z.string().nullish(),
  currency: Currency,
  created: UnixSeconds,
  status_transitions: z.looseObject({ finalized_at: UnixSeconds.nullish() }).nullish(),
  customer: Ref.nullish(),
  customer_name: z.string().nullish(),
  customer_email: z.string().nullish(),
  customer_address: StripeAddress.nullish(),
  customer_shipping: StripeShipping.nullish(),
  customer_tax_exempt: z.string().nullish(),
  customer_tax_ids: z.array(z.looseObject({ value: z.string() })).nullish(),
  shipping_details: StripeShipping.nullish(),
  shipping_cost: ShippingCost.nullish(),
  lines: z.looseObject({ data: z.array(StripeInvoiceLine), has_more: z.boolean().optional() }),
  subtotal: MinorUnits.nullish(),
  subtotal_excluding_tax: MinorUnits.nullish(),
  tax: MinorUnits.nullish(),
  total: MinorUnits.nullish(),
  total_excluding_tax: MinorUnits.nullish(),
  total_tax_amounts: z.array(TaxAmount).nullish(),
  total_taxes: z.array(Tax).nullish(),
});
export type StripeInvoice = z.infer<typeof StripeInvoice>;

export const StripeCreditNoteLine = z.looseObject({
  id: Id.optional(),
  /** Gross credited amount, excluding exclusive tax and discounts. */
  amount: MinorUnits,
  description: z.string().nullish(),
  quantity: z.int().nullish(),
  unit_amount: MinorUnits.nullish(),
  unit_amount_decimal: DecimalString.nullish(),
  discount_amount: MinorUnits.nullish(),
  discount_amounts: z.array(DiscountAmount).nullish(),
  pretax_credit_amounts: z.array(PretaxCreditAmount).nullish(),
  tax_amounts: z.array(TaxAmount).nullish(),
  taxes: z.array(Tax).nullish(),
});
export type StripeCreditNoteLine = z.infer<typeof StripeCreditNoteLine>;

export const StripeCreditNote = z.looseObject({
  id: Id,
  number: z.string().nullish(),
  status: z.string().nullish(),
  currency: Currency,
  created: UnixSeconds,
  customer: Ref.nullish(),
  invoice: Ref.nullish(),
  reason: z.string().nullish(),
  memo: z.string().nullish(),
  lines: z.looseObject({ data: z.array(StripeCreditNoteLine), has_more: z.boolean().optional() }).nullish(),
  subtotal: MinorUnits.nullish(),
  subtotal_excluding_tax: MinorUnits.nullish(),
  discount_amount: MinorUnits.nullish(),
  total: MinorUnits,
  total_excluding_tax: MinorUnits.nullish(),
  amount_shipping: MinorUnits.nullish(),
  shipping_cost: ShippingCost.nullish(),
  tax_amounts: z.array(TaxAmount).nullish(),
  total_taxes: z.array(Tax).nullish(),
});
export type StripeCreditNote = z.infer<typeof StripeCreditNote>;

export const StripeCustomer = z.looseObject({
  id: Id,
  name: z.string().nullish(),
  email: z.string().nullish(),
  address: StripeAddress.nullish(),
  shipping: StripeShipping.nullish(),
  /** `none`, `exempt` or `reverse`; read as a string so a new value does not reject the customer. */
  tax_exempt: z.string().nullish(),
  /** Only in the payload when the endpoint expands it. */
  tax_ids: z.looseObject({ data: z.array(z.looseObject({ value: z.string() })) }).nullish(),
  created: UnixSeconds.nullish(),
});
export type StripeCustomer = z.infer<typeof StripeCustomer>;

/** The event envelope, read first to route on `type`. */
export const StripeEventEnvelope = z.looseObject({
  id: Id,
  type: z.string().min(1),
  created: UnixSeconds,
  data: z.looseObject({ object: z.looseObject({}) }),
});
export type StripeEventEnvelope = z.infer<typeof StripeEventEnvelope>;

const eventOf = <T extends z.ZodType>(object: T) =>
  z.looseObject({ id: Id, type: z.string(), created: UnixSeconds, data: z.looseObject({ object }) });

export const StripeInvoiceEvent = eventOf(StripeInvoice);
export type StripeInvoiceEvent = z.infer<typeof StripeInvoiceEvent>;
export const StripeCreditNoteEvent = eventOf(StripeCreditNote);
export type StripeCreditNoteEvent = z.infer<typeof StripeCreditNoteEvent>;
export const StripeCustomerEvent = eventOf(StripeCustomer);
export type StripeCustomerEvent = z.infer<typeof StripeCustomerEvent>;
