import { Decimal } from 'decimal.js';
import { z } from 'zod';
import { DECIMAL_PATTERN, Money, amountProblem } from './money.js';
import { LONE_SURROGATE, hasLoneSurrogate } from './key-part.js';
import { RecordKey, type RecordKind } from './record-key.js';

/**
 * Canonical change events: what every connector emits and the ERP sends (DESIGN.md, data model;
 * docs/events.md has examples). In memory amounts are decimal.js values; on the wire they are
 * decimal strings (Decimal's toJSON writes the string), so JSON.stringify(event) is the wire form
 * and parseCanonicalEvent() reads it back.
 */

export const EVENT_SCHEMA_VERSION = 1;

/**
 * A decimal amount: a decimal string on the wire, a Decimal in memory. Never a JS number. Always a
 * Money in memory (also when a connector built it with another decimal.js constructor), so it is
 * written back in plain notation; bounded (AMOUNT_MAX_INTEGER_DIGITS, AMOUNT_MAX_DECIMALS).
 */
export const Amount = z
  .union(
    [
      z.instanceof(Decimal),
      z.string().regex(DECIMAL_PATTERN, { error: 'must be a decimal string such as "12.50"' }),
    ],
    { error: 'must be a decimal string such as "12.50" (JSON numbers are not accepted for amounts)' },
  )
  .transform((value, ctx) => {
    // Made by Money already (what connectors build): kept, it is immutable. Any other (another
    // decimal.js constructor, a string) is made a Money, which writes plain notation. (instanceof
    // cannot tell: decimal.js clones share one prototype.)
    const amount = typeof value !== 'string' && value.constructor === Money ? value : new Money(value);
    const problem = amountProblem(amount);
    if (problem === undefined) return amount;
    ctx.issues.push({ code: 'custom', message: problem, input: value });
    return z.NEVER;
  });

const DateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' });
const DateOnly = z.iso.date({ error: 'must be a date YYYY-MM-DD' });
const Text = z.string().trim().min(1);
/** Text that becomes part of a Redis key (an id, a document number): well-formed Unicode only. */
const KeyText = Text.refine((text) => !hasLoneSurrogate(text), { error: LONE_SURROGATE });
const OptionalKeyText = z.string().refine((text) => !hasLoneSurrogate(text), { error: LONE_SURROGATE });
const Country = z.string().regex(/^[A-Z]{2}$/, { error: 'must be an ISO 3166-1 alpha-2 code such as US' });
const Currency = z.string().regex(/^[A-Z]{3}$/, { error: 'must be an ISO 4217 code such as USD' });

export const Address = z.strictObject({
  street: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
  country: Country.optional(),
});
export type Address = z.infer<typeof Address>;

const Addresses = z.strictObject({ billing: Address.optional(), shipping: Address.optional() });

export const CUSTOMER_TYPES = ['retail', 'wholesale', 'retail_exempt', 'marketplace'] as const;

/** A customer as its source describes it. */
export const CustomerData = z.strictObject({
  name: z.string().optional(),
  email: z.string().optional(),
  addresses: Addresses.optional(),
  tax_number: z.string().optional(),
  customer_type: z.enum(CUSTOMER_TYPES).optional(),
  /** The platform's tax-exempt flag; mapped to customer_type retail_exempt. */
  tax_exempt: z.boolean().optional(),
  status: z.string().optional(),
  created_at: DateTime.optional(),
  updated_at: DateTime.optional(),
});
export type CustomerData = z.infer<typeof CustomerData>;

/** The customer of an invoice, carried inline so invoices never wait for customers. */
export const InvoiceCustomer = CustomerData.extend({ external_id: KeyText });
export type InvoiceCustomer = z.infer<typeof InvoiceCustomer>;

export const Line = z.strictObject({
  /** The platform's line id, when it has one. */
  id: z.string().optional(),
  product_id: z.string().optional(),
  sku: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  /** Price of one unit, before discounts; tax-inclusive when the document is. */
  unit_price: Amount,
  quantity: Amount,
  /** Discount on the whole line (not per unit). */
  discount: Amount.optional(),
  tax_code: z.string().optional(),
  /** Tax the platform charged on this line, and its rate as a fraction, when known. */
  tax_amount: Amount.optional(),
  tax_rate: Amount.optional(),
  /**
   * false: not a taxable supply — a donation, a gift card sold (tax is due when the card is spent,
   * not when it is bought), a line the platform marks non-taxable. Sent so the engine computes no
   * tax on it (docs/mapping.md, "Non-taxable lines"). Absent: taxable as the engine decides.
   */
  taxable: z.boolean().optional(),
});
export type Line = z.infer<typeof Line>;

export const Shipping = z.strictObject({
  /** Shipping charged, before its discount; tax-inclusive when the document is. */
  amount: Amount,
  discount: Amount.optional(),
  tax_code: z.string().optional(),
  tax_amount: Amount.optional(),
});
export type Shipping = z.infer<typeof Shipping>;

/** VAT facts an ERP may state directly (the VAT path uses them instead of deriving). */
export const VatFacts = z.strictObject({
  entity_jurisdiction: z.string().optional(),
  partner_name: z.string().optional(),
  partner_country: Country.optional(),
  vat_number: z.string().optional(),
  /** A percentage string: "19.00" means 19%. */
  vat_rate: Amount.optional(),
  vat_rate_type: z.enum(['standard', 'reduced', 'zero_rated', 'exempt']).optional(),
  transaction_type: z.string().optional(),
});
export type VatFacts = z.infer<typeof VatFacts>;

export const InvoiceData = z.strictObject({
  /** The document number people see (document_name). */
  number: OptionalKeyText.optional(),
  issued_at: DateTime,
  status: z.enum(['active', 'paid', 'cancelled']),
  currency: Currency,
  /** Only when the source states one; otherwise the tax engine fetches the rate. */
  exchange_rate: Amount.optional(),
  tax_inclusive: z.boolean(),
  customer: InvoiceCustomer.optional(),
  addresses: Addresses.optional(),
  lines: z.array(Line),
  /** Order-level discount, distributed pro rata by the tax engine. */
  discount: Amount.optional(),
  shipping: Shipping.optional(),
  /** Totals as the source computed them (informational; used to check and to link refunds). */
  subtotal: Amount.optional(),
  tax_total: Amount.optional(),
  total: Amount.optional(),
  vat: VatFacts.optional(),
  created_at: DateTime.optional(),
  updated_at: DateTime.optional(),
});
export type InvoiceData = z.infer<typeof InvoiceData>;

export const RefundData = z.strictObject({
  /** The original invoice's external id in the same source; absent for a credit with no invoice. */
  invoice_external_id: OptionalKeyText.min(1).optional(),
  number: z.string().optional(),
  issued_at: DateTime,
  currency: Currency,
  /** Refunded amount excluding tax, shipping refunds included (docs/events.md). */
  amount: Amount,
  /** Part of `amount` that refunds shipping. */
  shipping_amount: Amount.optional(),
  /** Tax refunded, as the source computed it. */
  tax_amount: Amount.optional(),
  tax_inclusive: z.boolean().optional(),
  /**
   * true: `amount`, `shipping_amount` and the lines are in the pricing of the original invoice —
   * tax included when the invoice's prices include tax — because the source reports refunds that
   * way without saying which (Shopify's refunds/create). The mapping then takes the net amount as
   * `amount − tax_amount` for a tax-inclusive invoice. Absent: `amount` excludes tax.
   */
  priced_as_invoice: z.boolean().optional(),
  lines: z.array(Line).optional(),
  reason: z.string().optional(),
  customer: InvoiceCustomer.optional(),
  addresses: Addresses.optional(),
  created_at: DateTime.optional(),
  updated_at: DateTime.optional(),
});
export type RefundData = z.infer<typeof RefundData>;

export const ExemptionData = z.strictObject({
  customer_external_id: KeyText,
  country: Country,
  /** Empty means the whole country. */
  jurisdictions: z.array(z.string()).default([]),
  start_date: DateOnly,
  end_date: DateOnly.nullable().default(null),
  certificate_id: z.string().optional(),
  exemption_type: z.enum(['full', 'partial']),
  status: z.enum(['active', 'cancelled']).default('active'),
});
export type ExemptionData = z.infer<typeof ExemptionData>;

const Empty = z.strictObject({});

const envelope = {
  v: z.literal(EVENT_SCHEMA_VERSION).default(EVENT_SCHEMA_VERSION),
  /** Stable per change: the same change delivered twice has the same id. */
  id: KeyText.max(255),
  /** When the change happened at the source (its updated time): orders events per record. */
  occurred_at: DateTime,
  /**
   * The object's own order of its states, for events of the same `occurred_at` (platform times
   * have one-second resolution): the higher precedence wins a tie (Stripe: open < paid < void).
   * Absent: 0. Set by the connector (docs/events.md, "Ordering").
   */
  precedence: z.number().int().min(0).max(1_000).optional(),
  /** A final state (a void): no later non-final event of the record replaces it, whatever its time. */
  final: z.boolean().optional(),
  /** The object's own version, when its platform keeps one: orders before occurred_at does. */
  version: z.number().int().nonnegative().optional(),
  /** The connector it came from: shopify, stripe, woocommerce, erp, ingest… */
  connector: Text,
  record: RecordKey,
};

const event = <T extends string, D extends z.ZodType>(type: T, data: D) =>
  z.strictObject({ ...envelope, type: z.literal(type), data });

const EventUnion = z.discriminatedUnion('type', [
  event('customer.upserted', CustomerData),
  event('customer.deleted', Empty.default({})),
  event('invoice.upserted', InvoiceData),
  event('invoice.cancelled', InvoiceData.partial().default({})),
  event('invoice.deleted', Empty.default({})),
  event('refund.created', RefundData),
  event('refund.cancelled', RefundData.partial().default({})),
  event('refund.deleted', Empty.default({})),
  event('exemption.upserted', ExemptionData),
  event('exemption.cancelled', ExemptionData.partial().default({ jurisdictions: [], end_date: null })),
  event('exemption.deleted', Empty.default({})),
]);

export const EVENT_TYPES = EventUnion.options.map((o) => o.shape.type.value);

export const CanonicalEvent = EventUnion.superRefine((e, ctx) => {
  const expected = kindOfEventType(e.type);
  if (e.record.kind !== expected) {
    ctx.addIssue({ code: 'custom', path: ['record', 'kind'], message: `must be ${expected} for a ${e.type} event` });
  }
});
export type CanonicalEvent = z.infer<typeof CanonicalEvent>;
export type CanonicalEventInput = z.input<typeof CanonicalEvent>;
export type EventType = CanonicalEvent['type'];

export function kindOfEventType(type: string): RecordKind {
  if (type.startsWith('customer.')) return 'customer';
  if (type.startsWith('exemption.')) return 'exemption';
  return 'transaction';
}

/**
 * The ordering facts of an event for the latest-state store, packed as one script argument:
 * `<precedence>|<final 0/1>|<version or empty>` (src/queue/redis-scripts.ts, RECORD_EVENT).
 */
export function eventOrder(event: Pick<CanonicalEvent, 'precedence' | 'final' | 'version'>): string {
  return `${event.precedence ?? 0}|${event.final === true ? 1 : 0}|${event.version ?? ''}`;
}

/** Reads an event from the wire (or from Redis), upgrading older schema versions when there are any. */
export function parseCanonicalEvent(raw: unknown): z.ZodSafeParseResult<CanonicalEvent> {
  return CanonicalEvent.safeParse(raw);
}
