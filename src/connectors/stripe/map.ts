import type { z } from 'zod';
import { CanonicalEvent, type CanonicalEventInput } from '../../domain/events.js';
import type { Decimal } from '../../domain/money.js';
import { refundExternalId } from '../../domain/record-key.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import { fromStripeAmount } from './currencies.js';
import type {
  StripeCreditNote,
  StripeCreditNoteEvent,
  StripeCreditNoteLine,
  StripeCustomerEvent,
  StripeInvoice,
  StripeInvoiceEvent,
  StripeInvoiceLine,
} from './schemas.js';
import { address, addresses, compact, decideTaxInclusive, lineBehaviors, optionalAmount, refId, sumAmounts, totalBehaviors, unitAndQuantity } from './values.js';

/**
 * Stripe events → canonical events. Pure: validated payload plus settings in, events out
 * (STYLE.md habit 1). The mapping rules and the decisions behind them are in
 * docs/connectors-stripe-erp.md.
 */

export const CONNECTOR_ID = 'stripe';

export interface StripeMapContext {
  /** The configured source of the Stripe connector (DESIGN.md invariant 3). */
  source: string;
}

export type StripeMapResult =
  | { kind: 'events'; events: CanonicalEvent[] }
  | { kind: 'ignored'; reason: string }
  | { kind: 'invalid'; message: string; fields?: Record<string, string[]> };

/** The Stripe event types taxsync reads, by the kind of object they carry. */
export const STRIPE_EVENT_TYPES = {
  'invoice.finalized': 'invoice',
  'invoice.paid': 'invoice',
  'invoice.updated': 'invoice',
  'invoice.voided': 'invoice',
  'credit_note.created': 'credit_note',
  'credit_note.voided': 'credit_note',
  'customer.created': 'customer',
  'customer.updated': 'customer',
} as const satisfies Record<string, 'invoice' | 'credit_note' | 'customer'>;
export type StripeEventType = keyof typeof STRIPE_EVENT_TYPES;

export function isHandledType(type: string): type is StripeEventType {
  return Object.hasOwn(STRIPE_EVENT_TYPES, type);
}

// ——— envelope ———

/**
 * One Stripe event is one canonical event, identified by the Stripe event id: Stripe redelivers an
 * event with the same `evt_…` id, so a redelivery has the same canonical id, while two distinct
 * events (even within the same second) never share one.
 */
function envelope(event: { id: string; created: number }, ctx: StripeMapContext, order: { precedence: number; final: boolean } | undefined = undefined) {
  return {
    id: `${CONNECTOR_ID}:${event.id}`,
    // Stripe objects carry no updated_at: event.created (whole seconds) is the only time Stripe
    // offers; within one second the object's status orders its events (precedence, below).
    occurred_at: isoFromUnix(event.created),
    ...(order === undefined ? {} : { precedence: order.precedence, ...(order.final ? { final: true } : {}) }),
    connector: CONNECTOR_ID,
    source: ctx.source,
  };
}

/**
 * The order of an invoice's statuses (docs/connectors-stripe-erp.md, "Ordering"): open < paid |
 * uncollectible < void. A void is final: Stripe never reopens a void invoice, so a state that
 * arrives after the void (invoice.finalized of the same second, a late retry) is stale.
 */
const INVOICE_PRECEDENCE: Readonly<Record<string, number>> = { open: 10, paid: 20, uncollectible: 20, void: 30 };
/** A credit note is issued, then possibly voided (final). */
const CREDIT_NOTE_PRECEDENCE: Readonly<Record<string, number>> = { issued: 10, void: 20 };

function invoiceOrder(status: string | null | undefined, voided: boolean): { precedence: number; final: boolean } {
  if (voided) return { precedence: INVOICE_PRECEDENCE.void!, final: true };
  return { precedence: INVOICE_PRECEDENCE[status ?? ''] ?? INVOICE_PRECEDENCE.open!, final: false };
}

/** Unix seconds as an ISO 8601 UTC date-time without milliseconds. */
export function isoFromUnix(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

// ——— invoices ———

export function mapInvoiceEvent(event: StripeInvoiceEvent, ctx: StripeMapContext): StripeMapResult {
  const invoice = event.data.object;
  if (invoice.status === 'draft') {
    return { kind: 'ignored', reason: 'draft invoice: nothing is sent before Stripe finalizes it' };
  }
  if (invoice.lines.has_more === true) {
    return {
      kind: 'invalid',
      message: 'the invoice has more lines than the webhook payload carries (lines.has_more is true); taxsync does not call the Stripe API to fetch the rest',
      fields: { 'data.object.lines.has_more': ['the payload holds only part of the invoice lines'] },
    };
  }
  const taxInclusive = decideTaxInclusive(
    invoice.lines.data.map(lineBehaviors),
    totalBehaviors(invoice.total_taxes, invoice.total_tax_amounts),
    invoice,
  );
  if (!taxInclusive.ok) return taxInclusive.invalid;

  const currency = invoice.currency;
  const customer = invoiceCustomer(invoice);
  const shipAddress = address((invoice.shipping_details ?? invoice.customer_shipping)?.address);
  const data = compact({
    number: invoice.number ?? undefined,
    issued_at: isoFromUnix(invoice.status_transitions?.finalized_at ?? invoice.created),
    status: invoiceStatus(invoice.status),
    currency: currency.toUpperCase(),
    tax_inclusive: taxInclusive.value,
    customer,
    addresses: addresses(address(invoice.customer_address), shipAddress),
    lines: invoice.lines.data.map((line) => invoiceLine(line, currency)),
    shipping: invoice.shipping_cost
      ? compact({
          amount: fromStripeAmount(
            taxInclusive.value ? (invoice.shipping_cost.amount_total ?? invoice.shipping_cost.amount_subtotal) : invoice.shipping_cost.amount_subtotal,
            currency,
          ),
          tax_amount: optionalAmount(invoice.shipping_cost.amount_tax, currency),
        })
      : undefined,
    subtotal: optionalAmount(invoice.subtotal, currency),
    tax_total: invoiceTaxTotal(invoice),
    total: optionalAmount(invoice.total, currency),
  });
  // A void invoice is a cancellation whatever event reports it (invoice.updated also fires on void).
  const cancelled = invoice.status === 'void' || event.type === 'invoice.voided';
  const { source, ...head } = envelope(event, ctx, invoiceOrder(invoice.status, cancelled));
  const record = { kind: 'transaction' as const, source, external_id: invoice.id };
  return finalize([cancelled ? { ...head, type: 'invoice.cancelled', record, data } : { ...head, type: 'invoice.upserted', record, data }]);
}

function invoiceStatus(status: string | null | undefined): 'paid' | 'cancelled' | 'active' {
  if (status === 'paid') return 'paid';
  if (status === 'void') return 'cancelled';
  return 'active';
}

function invoiceCustomer(invoice: StripeInvoice) {
  const id = refId(invoice.customer);
  if (id === undefined) return undefined;
  return compact({
    external_id: id,
    name: invoice.customer_name ?? undefined,
    email: invoice.customer_email ?? undefined,
    addresses: addresses(address(invoice.customer_address), address(invoice.customer_shipping?.address)),
    tax_number: invoice.customer_tax_ids?.[0]?.value,
    ...taxFacts(invoice.customer_tax_exempt),
  });
}

function invoiceLine(line: StripeInvoiceLine, currency: string) {
  const unit =
    line.pricing?.unit_amount_decimal ?? line.price?.unit_amount_decimal ?? (line.price?.unit_amount != null ? String(line.price.unit_amount) : undefined);
  const quantity = line.quantity_decimal ?? (line.quantity != null ? String(line.quantity) : undefined);
  const credits = (line.pretax_credit_amounts ?? []).filter((c) => c.type === 'credit_balance_transaction');
  const discounts = [...(line.discount_amounts ?? []), ...credits];
  const taxes = line.taxes ?? line.tax_amounts ?? [];
  return compact({
    id: line.id,
    product_id: line.pricing?.price_details?.product ?? refId(line.price?.product),
    description: line.description ?? undefined,
    ...unitAndQuantity(line.amount, unit, quantity, currency),
    discount: discounts.length > 0 ? sumAmounts(discounts, currency) : undefined,
    tax_amount: taxes.length > 0 ? sumAmounts(taxes, currency) : undefined,
  });
}

function invoiceTaxTotal(invoice: StripeInvoice): Decimal | undefined {
  const taxes = invoice.total_taxes ?? invoice.total_tax_amounts;
  if (taxes) return sumAmounts(taxes, invoice.currency);
  return optionalAmount(invoice.tax, invoice.currency);
}

// ——— credit notes ———

export function mapCreditNoteEvent(event: StripeCreditNoteEvent, ctx: StripeMapContext): StripeMapResult {
  const note = event.data.object;
  const lines = note.lines?.data ?? [];
  if (note.lines?.has_more === true) {
    return {
      kind: 'invalid',
      message: 'the credit note has more lines than the webhook payload carries (lines.has_more is true)',
      fields: { 'data.object.lines.has_more': ['the payload holds only part of the credit note lines'] },
    };
  }
  const taxInclusive = decideTaxInclusive(lines.map(lineBehaviors), totalBehaviors(note.total_taxes, note.tax_amounts), note);
  if (!taxInclusive.ok) return taxInclusive.invalid;

  const currency = note.currency;
  const taxes = note.total_taxes ?? note.tax_amounts;
  const taxAmount = taxes ? sumAmounts(taxes, currency) : undefined;
  const customerId = refId(note.customer);
  const data = compact({
    invoice_external_id: refId(note.invoice),
    number: note.number ?? undefined,
    issued_at: isoFromUnix(note.created),
    currency: currency.toUpperCase(),
    amount: creditNoteAmount(note, taxAmount),
    shipping_amount: note.shipping_cost ? shippingExcludingTax(note.shipping_cost, currency) : undefined,
    tax_amount: taxAmount,
    tax_inclusive: taxInclusive.value,
    lines: lines.length > 0 ? lines.map((line) => creditNoteLine(line, currency)) : undefined,
    reason: note.reason ?? undefined,
    customer: customerId !== undefined ? { external_id: customerId } : undefined,
  });
  const cancelled = note.status === 'void' || event.type === 'credit_note.voided';
  const order = cancelled ? { precedence: CREDIT_NOTE_PRECEDENCE.void!, final: true } : { precedence: CREDIT_NOTE_PRECEDENCE.issued!, final: false };
  const { source, ...head } = envelope(event, ctx, order);
  const record = { kind: 'transaction' as const, source, external_id: refundExternalId(note.id) };
  return finalize([cancelled ? { ...head, type: 'refund.cancelled', record, data } : { ...head, type: 'refund.created', record, data }]);
}

/**
 * The refunded amount excluding tax, shipping included and after every discount: Stripe's
 * `total_excluding_tax`, else `total` minus the tax. (`subtotal` and `subtotal_excluding_tax`
 * leave out invoice-level discounts and shipping, so they are not the refunded amount.)
 */
function creditNoteAmount(note: StripeCreditNote, taxAmount: Decimal | undefined): Decimal {
  if (note.total_excluding_tax != null) return fromStripeAmount(note.total_excluding_tax, note.currency);
  const total = fromStripeAmount(note.total, note.currency);
  return taxAmount ? total.minus(taxAmount) : total;
}

/** Shipping without its tax, whether the shipping rate was tax-inclusive or not. */
function shippingExcludingTax(cost: NonNullable<StripeCreditNote['shipping_cost']>, currency: string): Decimal {
  if (cost.amount_total != null && cost.amount_tax != null) {
    return fromStripeAmount(cost.amount_total, currency).minus(fromStripeAmount(cost.amount_tax, currency));
  }
  return fromStripeAmount(cost.amount_subtotal, currency);
}

function creditNoteLine(line: StripeCreditNoteLine, currency: string) {
  const unit = line.unit_amount_decimal ?? (line.unit_amount != null ? String(line.unit_amount) : undefined);
  const quantity = line.quantity != null ? String(line.quantity) : undefined;
  const credits = (line.pretax_credit_amounts ?? []).filter((c) => c.type === 'credit_balance_transaction');
  const discounts = [...(line.discount_amounts ?? []), ...credits];
  const taxes = line.taxes ?? line.tax_amounts ?? [];
  let discount: Decimal | undefined;
  if (discounts.length > 0) discount = sumAmounts(discounts, currency);
  else if (line.discount_amount != null && line.discount_amount !== 0) discount = fromStripeAmount(line.discount_amount, currency);
  return compact({
    id: line.id,
    description: line.description ?? undefined,
    ...unitAndQuantity(line.amount, unit, quantity, currency),
    discount,
    tax_amount: taxes.length > 0 ? sumAmounts(taxes, currency) : undefined,
  });
}

// ——— customers ———

export function mapCustomerEvent(event: StripeCustomerEvent, ctx: StripeMapContext): StripeMapResult {
  const customer = event.data.object;
  const data = compact({
    name: customer.name ?? undefined,
    email: customer.email ?? undefined,
    addresses: addresses(address(customer.address), address(customer.shipping?.address)),
    tax_number: customer.tax_ids?.data[0]?.value,
    ...taxFacts(customer.tax_exempt),
    created_at: customer.created != null ? isoFromUnix(customer.created) : undefined,
  });
  const { source, ...head } = envelope(event, ctx);
  return finalize([
    { ...head, type: 'customer.upserted', record: { kind: 'customer', source, external_id: customer.id }, data },
  ]);
}

/**
 * Stripe's `tax_exempt`: `exempt` → exempt (customer_type retail_exempt). `reverse` (reverse
 * charge: a business customer accounts for the tax itself) is not a blanket exemption: the
 * customer is a business, `wholesale`, sent with its tax id so the engine can apply its B2B and
 * reverse-charge rules (docs/connectors-stripe-erp.md); `none` → not exempt.
 */
function taxFacts(value: string | null | undefined): { tax_exempt?: boolean; customer_type?: 'wholesale' } {
  if (value === 'exempt') return { tax_exempt: true };
  if (value === 'reverse') return { tax_exempt: false, customer_type: 'wholesale' };
  if (value === 'none') return { tax_exempt: false };
  return {};
}

/** Every mapped event passes the canonical schema, or the delivery is invalid (naming the field). */
function finalize(inputs: CanonicalEventInput[]): StripeMapResult {
  const events: CanonicalEvent[] = [];
  for (const input of inputs) {
    const parsed = CanonicalEvent.safeParse(input);
    if (!parsed.success) return invalidCanonical(parsed.error);
    events.push(parsed.data);
  }
  return { kind: 'events', events };
}

function invalidCanonical(error: z.ZodError): StripeMapResult {
  const fields = issuesToFields(error.issues, 'event.');
  return { kind: 'invalid', message: `the mapped event does not match the canonical schema: ${summariseFields(fields, 5)}`, fields };
}
