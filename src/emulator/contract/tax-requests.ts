import { z } from 'zod';
import { CalendarDate, CountryShape, CurrencyShape, Decimal, Id, Timestamp } from './primitives.js';

/**
 * Request bodies of the tax engine as the emulator reads tax-calculation-api.md: snake_case
 * fields only, every unknown field refused (camelCase and `lineAmount` included, named by the
 * error messages of answer.ts). Where the document says "not shown", docs/decisions.md decides
 * (required fields, the fields of shipping_fee, the JSON body of the variant B token request).
 */

const text = z.string();

export const TokenBody = z.strictObject({ client_id: text.min(1), client_secret: text.min(1) });
export type TokenBody = z.infer<typeof TokenBody>;

export const OAuthForm = z.strictObject({ grant_type: z.literal('client_credentials'), client_id: text.min(1), client_secret: text.min(1) });

/** Address object: five strings, none required; country a code. */
export const AddressBody = z.strictObject({
  street: text.optional(),
  city: text.optional(),
  state: text.optional(),
  zip: text.optional(),
  country: CountryShape.optional(),
});
export type AddressBody = z.infer<typeof AddressBody>;

export const CUSTOMER_TYPE_VALUES = ['retail', 'wholesale', 'retail_exempt', 'marketplace'] as const;

/** `source` is checked against the configured list by withSources(); here any string. */
const sourceField = text.min(1);
const externalIdField = text.min(1);

export const CustomerBody = z.strictObject({
  source: sourceField,
  external_id: externalIdField,
  name: text.optional(),
  email: text.optional(),
  addresses: z.strictObject({ billing: AddressBody.optional(), shipping: AddressBody.optional() }).optional(),
  tax_number: text.optional(),
  customer_type: z.enum(CUSTOMER_TYPE_VALUES).optional(),
  customer_status: text.optional(),
  comment: text.optional(),
  external_created_at: Timestamp.optional(),
  external_updated_at: Timestamp.optional(),
});
export type CustomerBody = z.infer<typeof CustomerBody>;

export const EXEMPTION_TYPE_VALUES = ['full', 'partial'] as const;
export const EXEMPTION_STATUS_VALUES = ['active', 'cancelled'] as const;
export type ExemptionKind = (typeof EXEMPTION_TYPE_VALUES)[number];
export type ExemptionState = (typeof EXEMPTION_STATUS_VALUES)[number];

/** POST and PUT take the same body; required fields per docs/decisions.md. */
export const ExemptionBody = z.strictObject({
  customer_id: Id,
  country: CountryShape,
  jurisdictions: z.array(text).optional(),
  start_date: CalendarDate,
  end_date: CalendarDate.nullable().optional(),
  certificate_id: Id.optional(),
  exemption_type: z.enum(EXEMPTION_TYPE_VALUES),
  exemption_status: z.enum(EXEMPTION_STATUS_VALUES).optional(),
});
export type ExemptionBody = z.infer<typeof ExemptionBody>;

export const ItemBody = z.strictObject({
  name: text.optional(),
  description: text.optional(),
  tax_code: text.optional(),
  unit_price: Decimal,
  quantity: Decimal.optional(),
  discount: Decimal.optional(),
  manual_sales_tax_rate: Decimal.optional(),
  manual_sales_tax_rates: z.record(text, Decimal).optional(),
  exemption_id: Id.optional(),
  exemption_reason: text.optional(),
});
export type ItemBody = z.infer<typeof ItemBody>;

/** The inline customer of customer_details: the five fields the document lists. */
export const InlineCustomerBody = z.strictObject({
  external_id: externalIdField,
  source: sourceField,
  name: text.optional(),
  external_created_at: Timestamp.optional(),
  external_updated_at: Timestamp.optional(),
});
export type InlineCustomerBody = z.infer<typeof InlineCustomerBody>;

/** "references the customer in one of three ways". */
export const CustomerReferenceBody = z.union(
  [
    z.strictObject({ customer_id: Id }),
    z.strictObject({ customer_external_id: externalIdField, customer_source: sourceField }),
    z.strictObject({ customer: InlineCustomerBody }),
  ],
  { error: 'customer_details takes exactly one of: customer_id; customer_external_id with customer_source; customer' },
);
export type CustomerReferenceBody = z.infer<typeof CustomerReferenceBody>;

export const TRANSACTION_STATUS_VALUES = ['active', 'paid', 'cancelled'] as const;

export const TransactionBody = z.strictObject({
  source: sourceField,
  external_id: externalIdField,
  transaction_date: Timestamp.optional(),
  document_name: text.optional(),
  is_tax_inclusive: z.boolean().optional(),
  /** "lowercase; invoice and refund are known". */
  transaction_type: text.regex(/^[a-z][a-z0-9_]*$/, 'must be a lowercase identifier such as invoice or refund').optional(),
  transaction_status: z.enum(TRANSACTION_STATUS_VALUES).optional(),
  transaction_level_discount: Decimal.optional(),
  created_from: text.nullable().optional(),
  external_created_at: Timestamp.optional(),
  external_updated_at: Timestamp.optional(),
  override_threshold: z.boolean().optional(),
  currency_details: z.strictObject({ currency: CurrencyShape, manual_exchange_rate: Decimal.optional() }).optional(),
  refund_info: z.strictObject({ is_refund_linked: z.boolean(), refund_linked_percentage: Decimal.optional() }).optional(),
  addresses: z
    .strictObject({ billing: AddressBody.optional(), shipping: AddressBody.optional(), shipping_from: AddressBody.optional(), supplier: AddressBody.optional() })
    .optional(),
  customer_details: CustomerReferenceBody.optional(),
  items: z.array(ItemBody).optional(),
  /** Fields not shown; `{amount, tax_code?}` per docs/decisions.md. */
  shipping_fee: z.strictObject({ amount: Decimal, tax_code: text.optional() }).nullable().optional(),
});
export type TransactionBody = z.infer<typeof TransactionBody>;

const SOURCE_KEYS = ['source', 'customer_source'];

/**
 * The schema narrowed to the accepted `source` values: every `source` and `customer_source`
 * anywhere in the body must be one of `sources` (rule 3 makes a wrong one a duplicate record).
 */
export function withSources<S extends z.ZodType>(schema: S, sources: readonly string[]): S {
  const accepted = new Set(sources);
  return schema.superRefine((body, ctx) => {
    const walk = (node: unknown, path: (string | number)[]) => {
      if (Array.isArray(node)) return node.forEach((child, i) => walk(child, [...path, i]));
      if (node === null || typeof node !== 'object') return;
      for (const [key, child] of Object.entries(node)) {
        if (SOURCE_KEYS.includes(key) && typeof child === 'string') {
          if (!accepted.has(child)) ctx.addIssue({ code: 'custom', path: [...path, key], message: `unknown source "${child}"; expected one of ${sources.join(', ')}` });
        } else {
          walk(child, [...path, key]);
        }
      }
    };
    walk(body, []);
  });
}
