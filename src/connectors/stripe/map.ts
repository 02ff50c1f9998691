import type { z } from 'zod';
import { CanonicalEvent, type Address, type CanonicalEventInput } from '../../domain/events.js';
import { Money, type Decimal } from '../../domain/money.js';
import { refundExternalId } from '../../domain/record-key.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import { fromStripeAmount, fromStripeDecimal } from './currencies.js';
import type {
  StripeAddress,
  StripeCreditNote,
  StripeCreditNoteEvent,
  StripeCreditNoteLine,
  StripeCustomerEvent,
  StripeInvoice,
  StripeInvoiceEvent,
  StripeInvoiceLine,
} from './schemas.js';

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

// ——— tax behaviour ———

type Behavior = 'inclusive' | 'exclusive';
interface TaxSignals {
  taxes?: readonly { tax_behavior: Behavior }[] | null;
  tax_amounts?: readonly { inclusive: boolean }[] | null;
  price?: { tax_behavior?: string | null } | null;
}

/** What one line says about tax inclusion: its taxes when it has any, else its price's tax_behavior. */
function lineBehaviors(line: TaxSignals): Behavior[] {
  const fromTaxes = totalBehaviors(line.taxes, line.tax_amounts);
  if (fromTaxes.length > 0) return fromTaxes;
  const declared = line.price?.tax_behavior;
  return declared === 'inclusive' || declared === 'exclusive' ? [declared] : [];
}

function totalBehaviors(
  taxes: readonly { tax_behavior: Behavior }[] | null | undefined,
  taxAmounts: readonly { inclusive: boolean }[] | null | undefined,
): Behavior[] {
  if (taxes && taxes.length > 0) return taxes.map((t) => t.tax_behavior);
  if (taxAmounts && taxAmounts.length > 0) return taxAmounts.map((t) => (t.inclusive ? 'inclusive' : 'exclusive'));
  return [];
}

/**
 * One flag for the document: from the lines' taxes (or their prices' tax_behavior), else the
 * document's total taxes, else the amounts (`subtotal_excluding_tax` differs from `subtotal` only
 * when some tax is included in the prices), else exclusive. A document mixing inclusive and
 * exclusive lines cannot be expressed with one flag and is refused rather than sent wrong.
 */
function decideTaxInclusive(
  lines: Behavior[][],
  totals: Behavior[],
  amounts: { subtotal?: number | null; subtotal_excluding_tax?: number | null },
): { ok: true; value: boolean } | { ok: false; invalid: StripeMapResult } {
  const seen = new Set(lines.flat());
  if (seen.size === 0) for (const b of totals) seen.add(b);
  if (seen.size > 1) {
    return {
      ok: false,
      invalid: {
        kind: 'invalid',
        message: 'the document mixes tax-inclusive and tax-exclusive lines; taxsync sends one tax_inclusive flag per document',
        fields: { 'data.object.lines': ['lines mix inclusive and exclusive tax behavior'] },
      },
    };
  }
  if (seen.size === 1) return { ok: true, value: seen.has('inclusive') };
  const { subtotal, subtotal_excluding_tax: excluding } = amounts;
  return { ok: true, value: subtotal != null && excluding != null && subtotal !== excluding };
}

// ——— amounts and helpers ———

/**
 * Unit price and quantity of a line, such that unit_price × quantity is exactly the line's
 * `amount` — what Stripe charged for it before discounts (prorations, trials and partial periods
 * all live there; `unit_amount` is only the price's list price). In order:
 * - the price's unit amount × quantity when that is the amount (an ordinary line);
 * - else amount ÷ quantity per unit, when that divides exactly (tiered prices);
 * - else one unit at the amount (a trial line of 0, a proration credit of −7.50 for one seat).
 * Amounts are compared in minor units, before any conversion.
 */
export function unitAndQuantity(amount: number, unit: string | undefined, quantity: string | undefined, currency: string) {
  const whole = { unit_price: fromStripeAmount(amount, currency), quantity: new Money(1) };
  if (quantity === undefined) return whole;
  const qty = new Money(quantity);
  if (!qty.greaterThan(0)) return whole;
  if (unit !== undefined && new Money(unit).times(qty).equals(amount)) return { unit_price: fromStripeDecimal(unit, currency), quantity: qty };
  const perUnit = new Money(amount).dividedBy(qty);
  if (perUnit.decimalPlaces() <= 12 && perUnit.times(qty).equals(amount)) {
    return { unit_price: fromStripeDecimal(perUnit.toFixed(), currency), quantity: qty };
  }
  return whole;
}

function sumAmounts(items: readonly { amount: number }[], currency: string): Decimal {
  return items.reduce<Decimal>((sum, item) => sum.plus(fromStripeAmount(item.amount, currency)), new Money(0));
}

function optionalAmount(amount: number | null | undefined, currency: string): Decimal | undefined {
  return amount == null ? undefined : fromStripeAmount(amount, currency);
}

function refId(ref: string | { id: string } | null | undefined): string | undefined {
  if (ref == null) return undefined;
  return typeof ref === 'string' ? ref : ref.id;
}

/** Stripe's address as the canonical one: line1 and line2 joined into `street`. */
function address(a: StripeAddress | null | undefined): Address | undefined {
  if (!a) return undefined;
  const street = [a.line1, a.line2].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join(', ');
  const out = compact({
    street: street || undefined,
    city: a.city || undefined,
    state: a.state || undefined,
    zip: a.postal_code || undefined,
    country: a.country ? a.country.toUpperCase() : undefined,
  });
  return Object.keys(out).length > 0 ? out : undefined;
}

function addresses(billing: Address | undefined, shipping: Address | undefined) {
  return billing || shipping ? compact({ billing, shipping }) : undefined;
}

/** Drops undefined members so the wire form has no empty keys. */
function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
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
