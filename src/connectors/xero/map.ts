import type { CanonicalEvent, CustomerData, InvoiceCustomer, InvoiceData, RefundData } from '../../domain/events.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import type { Decimal } from '../../domain/money.js';
import { refundExternalId } from '../../domain/record-key.js';
import { canonicalOrInvalid } from '../shared/canonical.js';
import { compact, nonBlank, nonEmpty } from '../shared/fields.js';
import { invalid, isInvalid, linesOf, pricingOf, type Invalid } from './lines.js';
import {
  XeroWebhookEvent,
  isXeroGuid,
  type XeroContact,
  type XeroCreditNote,
  type XeroInvoice,
  type XeroWebhookPayload,
} from './schemas.js';
import { address, contactAddresses, contactName } from './values.js';

/**
 * Xero → canonical events. PURE: a webhook delivery in, the notices a fetch job needs out; a
 * record the Accounting API answered (read with schemas.ts) in, canonical events out. Facts about
 * Xero: docs/research/accounting-payloads.md; the canonical events: docs/events.md.
 */

export const CONNECTOR_ID = 'xero';

export interface XeroMapContext {
  /** settings.source: the `source` of every record (never from a payload). */
  source: string;
  /** Where the record sits in its answer (`Invoices[3].`), put in front of every field named. @defaultValue '' */
  path?: string;
}

export type XeroMapResult =
  | { kind: 'events'; events: CanonicalEvent[] }
  | { kind: 'ignore'; reason: string }
  | Invalid;

const ignore = (reason: string): XeroMapResult => ({ kind: 'ignore', reason });

// ——— webhook notices ———

/** The categories taxsync reads, with the Accounting API collection a fetch job GETs. */
export const XERO_COLLECTIONS = { INVOICE: 'Invoices', CONTACT: 'Contacts', CREDITNOTE: 'CreditNotes' } as const;
export type XeroCategory = keyof typeof XERO_COLLECTIONS;

/** What a fetch job needs: GET <apiUrl>/api.xro/2.0/<collection>/<resourceId> with `xero-tenant-id: <tenantId>`. */
export interface XeroNotice {
  tenantId: string;
  category: XeroCategory;
  collection: (typeof XERO_COLLECTIONS)[XeroCategory];
  /** A GUID (checked), lowercase: safe in a URL path. */
  resourceId: string;
  /** CREATE or UPDATE, or a type Xero adds later: the fetch reads the current state whatever it says. */
  eventType: string;
  /** eventDateUtc as ISO 8601 UTC. */
  occurredAt: string;
}

export interface XeroNoticeContext {
  /** The organisations this connection reads; a delivery names every organisation connected to the app. @defaultValue all */
  tenants?: readonly string[];
}

/**
 * The events of a verified delivery as notices, in delivery order. Each event is read on its own:
 * one that is malformed, of a category taxsync does not read (SUBSCRIPTION: app billing, tenantType
 * APPLICATION; anything Xero adds later), of another organisation, or a supplier credit note
 * (`data.Type` ACCPAYCREDIT, which Xero states in the event) is skipped with its reason.
 */
export function xeroNotices(payload: XeroWebhookPayload, ctx: XeroNoticeContext = {}): { notices: XeroNotice[]; skipped: { index: number; reason: string }[] } {
  const notices: XeroNotice[] = [];
  const skipped: { index: number; reason: string }[] = [];
  const tenants = ctx.tenants?.map((t) => t.toLowerCase());
  payload.events.forEach((raw, index) => {
    const parsed = XeroWebhookEvent.safeParse(raw);
    if (!parsed.success) {
      skipped.push({ index, reason: `not a Xero event: ${summariseFields(issuesToFields(parsed.error.issues, `events[${index}].`), 3)}` });
      return;
    }
    const event = parsed.data;
    const category = event.eventCategory.toUpperCase();
    const reason = skipReason(event, category, tenants);
    if (reason !== undefined) {
      skipped.push({ index, reason });
      return;
    }
    const known = category as XeroCategory;
    notices.push({
      tenantId: event.tenantId,
      category: known,
      collection: XERO_COLLECTIONS[known],
      resourceId: event.resourceId.toLowerCase(),
      eventType: event.eventType,
      occurredAt: event.eventDateUtc,
    });
  });
  return { notices, skipped };
}

function skipReason(event: XeroWebhookEvent, category: string, tenants: readonly string[] | undefined): string | undefined {
  if (category === 'SUBSCRIPTION') return 'a SUBSCRIPTION event (the app\'s own billing), not accounting data';
  if (!Object.hasOwn(XERO_COLLECTIONS, category)) return `eventCategory ${category} is not one taxsync reads`;
  if (tenants !== undefined && !tenants.includes(event.tenantId.toLowerCase())) return `tenant ${event.tenantId} is not an organisation this connection reads`;
  if (!isXeroGuid(event.resourceId)) return 'resourceId is not a Xero id (a GUID)';
  if (category === 'CREDITNOTE' && event.data?.Type?.toUpperCase() === 'ACCPAYCREDIT') return 'a supplier credit note (ACCPAYCREDIT): purchases carry no sales tax';
  return undefined;
}

/** One key per notice, for dedupe: Xero gives a delivery no id (docs/research/accounting-payloads.md, "Not found"). */
export function noticeKey(n: XeroNotice): string {
  return `${n.tenantId}:${n.category}:${n.resourceId}:${n.eventType}:${n.occurredAt}`;
}

// ——— states and envelope ———

interface State {
  type: 'upserted' | 'cancelled' | 'deleted';
  status?: 'active' | 'paid';
  precedence: number;
  final: boolean;
}

/**
 * Invoice and credit note statuses (Xero's enum). DRAFT and SUBMITTED are not final documents:
 * nothing is sent, as for Stripe drafts. VOIDED (only AUTHORISED documents are voided; Xero keeps
 * their amounts) is a cancellation of the whole document. DELETED (only DRAFT and SUBMITTED ones
 * are deleted, so the engine never held it) is a deletion, which the engine answers 404 when there
 * is nothing to delete. Xero offers no way back from either (a voided invoice is copied, not
 * restored; the research did not confirm this), so both are final. Within one millisecond of
 * UpdatedDateUTC: AUTHORISED 10 < PAID 20 < VOIDED, DELETED 30.
 */
const STATES: Readonly<Record<string, State | string>> = {
  DRAFT: 'a DRAFT is not a final document: nothing is sent until Xero authorises it',
  SUBMITTED: 'SUBMITTED for approval, not yet authorised: nothing is sent until Xero authorises it',
  AUTHORISED: { type: 'upserted', status: 'active', precedence: 10, final: false },
  PAID: { type: 'upserted', status: 'paid', precedence: 20, final: false },
  VOIDED: { type: 'cancelled', precedence: 30, final: true },
  DELETED: { type: 'deleted', precedence: 30, final: true },
};

function stateOf(status: string, at: string): State | string | Invalid {
  const known = Object.hasOwn(STATES, status.toUpperCase()) ? STATES[status.toUpperCase()] : undefined;
  return known ?? invalid(`Status ${status} is not a Xero document status taxsync knows`, { [`${at}Status`]: [`unknown status ${status}`] });
}

/**
 * UpdatedDateUTC (milliseconds) is the version: `occurred_at` orders the record's events, so an
 * older read (a late webhook fetch, a backfill page) never replaces newer data, and the same state
 * read twice has the same id. Xero keeps no version number of its own.
 */
function envelope(idPart: string, updated: string, state: State | undefined) {
  return {
    id: `${CONNECTOR_ID}:${idPart}:${Date.parse(updated)}`,
    occurred_at: updated,
    ...(state === undefined ? {} : { precedence: state.precedence }),
    ...(state?.final === true ? { final: true } : {}),
    connector: CONNECTOR_ID,
  };
}

/** Every mapped event passes the canonical schema, or the record is invalid (naming the event field). */
const finalize = canonicalOrInvalid;

// ——— invoices ———

/** An ACCREC invoice (GET /Invoices) → invoice.upserted, invoice.cancelled or invoice.deleted. */
export function mapXeroInvoice(invoice: XeroInvoice, ctx: XeroMapContext): XeroMapResult {
  const at = ctx.path ?? '';
  if (invoice.Type !== 'ACCREC') {
    return ignore(invoice.Type === 'ACCPAY' ? 'a bill (ACCPAY): purchases carry no sales tax' : `invoice Type ${invoice.Type} is not a sales invoice (ACCREC)`);
  }
  const state = stateOf(invoice.Status, at);
  if (typeof state === 'string') return ignore(`invoice ${invoice.InvoiceNumber ?? invoice.InvoiceID}: ${state}`);
  if (isInvalid(state)) return state;
  const head = envelope(invoice.InvoiceID, invoice.UpdatedDateUTC, state);
  const record = { kind: 'transaction' as const, source: ctx.source, external_id: invoice.InvoiceID };
  if (state.type === 'deleted') return finalize([{ ...head, type: 'invoice.deleted', record, data: {} }]);
  const data = invoiceData(invoice, state.status ?? 'cancelled', at);
  if (isInvalid(data)) return data;
  return finalize([{ ...head, type: state.type === 'cancelled' ? 'invoice.cancelled' : 'invoice.upserted', record, data }]);
}

function invoiceData(invoice: XeroInvoice, status: InvoiceData['status'], at: string): InvoiceData | Invalid {
  const pricing = pricingOf(invoice.LineAmountTypes, at);
  if (isInvalid(pricing)) return pricing;
  const issuedAt = invoice.Date ?? invoice.DateString;
  if (issuedAt == null) return invalid('the invoice has no Date', { [`${at}Date`]: ['missing'] });
  const lines = linesOf(invoice.LineItems, invoice.CurrencyCode, pricing, at);
  if (isInvalid(lines)) return lines;
  return compact<InvoiceData>({
    number: nonBlank(invoice.InvoiceNumber),
    issued_at: issuedAt,
    status,
    currency: invoice.CurrencyCode,
    exchange_rate: exchangeRate(invoice.CurrencyRate),
    tax_inclusive: pricing.inclusive,
    customer: invoice.Contact ? documentCustomer(invoice.Contact) : undefined,
    addresses: invoiceAddresses(invoice),
    lines,
    subtotal: invoice.SubTotal ?? undefined,
    tax_total: invoice.TotalTax ?? undefined,
    total: invoice.Total ?? undefined,
    updated_at: invoice.UpdatedDateUTC,
  });
}

/**
 * CurrencyRate, as Xero gives it, only for a foreign-currency document (Xero writes 1 on documents
 * in the organisation's base currency: then none is stated and the engine uses its own). Assumed
 * direction: units of the document's currency per one unit of the base currency (base = amount ÷
 * rate; USD 500 at 0.625 = NZD 800), as the research fixtures assume and as Xero shows rates
 * ("1 NZD = 0.625 USD"); no Xero page states it (docs/research/accounting-payloads.md, "Not
 * found"). It is not inverted: the canonical exchange_rate has no documented direction either, and
 * 1 ÷ 0.937053 would have to be rounded.
 */
function exchangeRate(rate: Decimal | null | undefined): Decimal | undefined {
  return rate == null || rate.equals(1) ? undefined : rate;
}

/** The contact an invoice or credit note carries (a stub: ContactID and Name, often no more). */
function documentCustomer(contact: XeroContact): InvoiceCustomer {
  return compact<InvoiceCustomer>({
    external_id: contact.ContactID,
    name: contactName(contact),
    email: nonBlank(contact.EmailAddress),
    tax_number: nonBlank(contact.TaxNumber),
    addresses: contactAddresses(contact),
  });
}

/** Billing: the contact's postal (POBOX) address; shipping: the invoice's own TO address (US sales tax), else the contact's STREET. */
function invoiceAddresses(invoice: XeroInvoice): InvoiceData['addresses'] {
  const to = address(invoice.InvoiceAddresses.find((a) => a.InvoiceAddressType?.toUpperCase() === 'TO'));
  const contact = invoice.Contact ? contactAddresses(invoice.Contact) : undefined;
  return nonEmpty(compact({ billing: contact?.billing, shipping: to ?? contact?.shipping }));
}

// ——— credit notes ———

/**
 * An ACCRECCREDIT credit note (GET /CreditNotes) → refund.created, refund.cancelled (VOIDED) or
 * refund.deleted (DELETED), record `refund-<CreditNoteID>`. ACCPAYCREDIT (a supplier's) is ignored.
 *
 * `amount` is the note's SubTotal — the whole credit, net of tax, as docs/events.md defines it —
 * and not an allocation's Amount, which includes tax. The credit note, not its allocation, is the
 * tax document, so a note allocated to one invoice is linked to it whole: CN-0011 gives 54.00 of
 * INV-0101's 100.00 (0.54), CN-0012 20.00 of INV-0102's 92.00 − 12.00 (0.25). No allocation: an
 * unlinked refund, taxed on its own lines. Allocated to several invoices: refused (see linkedInvoice).
 */
export function mapXeroCreditNote(note: XeroCreditNote, ctx: XeroMapContext): XeroMapResult {
  const at = ctx.path ?? '';
  if (note.Type !== 'ACCRECCREDIT') {
    return ignore(note.Type === 'ACCPAYCREDIT' ? 'a supplier credit note (ACCPAYCREDIT): purchases carry no sales tax' : `credit note Type ${note.Type} is not a sales credit note (ACCRECCREDIT)`);
  }
  const state = stateOf(note.Status, at);
  if (typeof state === 'string') return ignore(`credit note ${note.CreditNoteNumber ?? note.CreditNoteID}: ${state}`);
  if (isInvalid(state)) return state;
  const externalId = refundExternalId(note.CreditNoteID);
  const head = envelope(externalId, note.UpdatedDateUTC, state);
  const record = { kind: 'transaction' as const, source: ctx.source, external_id: externalId };
  if (state.type === 'deleted') return finalize([{ ...head, type: 'refund.deleted', record, data: {} }]);
  const data = refundData(note, at);
  if (isInvalid(data)) return data;
  return finalize([{ ...head, type: state.type === 'cancelled' ? 'refund.cancelled' : 'refund.created', record, data }]);
}

function refundData(note: XeroCreditNote, at: string): RefundData | Invalid {
  const link = linkedInvoice(note, at);
  if (isInvalid(link)) return link;
  const pricing = pricingOf(note.LineAmountTypes, at);
  if (isInvalid(pricing)) return pricing;
  const issuedAt = note.Date ?? note.DateString;
  if (issuedAt == null) return invalid('the credit note has no Date', { [`${at}Date`]: ['missing'] });
  if (note.SubTotal == null) return invalid('the credit note has no SubTotal', { [`${at}SubTotal`]: ['missing: the refunded amount before tax'] });
  const lines = linesOf(note.LineItems, note.CurrencyCode, pricing, at);
  if (isInvalid(lines)) return lines;
  const customer = note.Contact ? documentCustomer(note.Contact) : undefined;
  return compact<RefundData>({
    invoice_external_id: link.invoiceId,
    number: nonBlank(note.CreditNoteNumber),
    issued_at: issuedAt,
    currency: note.CurrencyCode,
    amount: note.SubTotal,
    tax_amount: note.TotalTax ?? undefined,
    tax_inclusive: pricing.inclusive,
    lines: lines.length > 0 ? lines : undefined,
    reason: nonBlank(note.Reference),
    customer,
    addresses: customer?.addresses,
    updated_at: note.UpdatedDateUTC,
  });
}

/**
 * The invoice a credit note is linked to: the one its live allocations (IsDeleted not true) name.
 * Several allocations to one invoice are one link. Allocations to several invoices are refused: a
 * canonical refund names one invoice, and one record per allocation (`refund-<note>-<invoice>`)
 * would be a set of records that changes as allocations are added and removed — a pure mapping
 * cannot delete the records of allocations it no longer sees, and the processor keeps a refund's
 * earlier invoice when a later version names none, so an unlinked fallback would leave the whole
 * credit on the first invoice. The dead letter names the allocations for an operator.
 */
function linkedInvoice(note: XeroCreditNote, at: string): { invoiceId: string | undefined } | Invalid {
  const fields: Record<string, string[]> = {};
  const ids = new Set<string>();
  note.Allocations.forEach((allocation, i) => {
    if (allocation.IsDeleted === true) return;
    const id = allocation.Invoice?.InvoiceID;
    if (id == null) fields[`${at}Allocations[${i}].Invoice.InvoiceID`] = ['missing: an allocation must name its invoice'];
    else ids.add(id);
  });
  if (Object.keys(fields).length > 0) return invalid('an allocation names no invoice', fields);
  if (ids.size > 1) {
    const message = `the credit note is allocated to ${ids.size} invoices (${[...ids].join(', ')}); taxsync links a refund to one invoice`;
    return invalid(message, { [`${at}Allocations`]: [message] });
  }
  return { invoiceId: [...ids][0] };
}

// ——— contacts ———

/**
 * A contact (GET /Contacts) → customer.upserted. A contact that is only a supplier (IsSupplier and
 * not IsCustomer) is ignored: taxsync reports sales. One that is neither is sent: Xero sets
 * IsCustomer only once a sales invoice exists, and a new customer's tax facts should be in the
 * engine before its first invoice. Xero has no tax-exempt flag (AccountsReceivableTaxType is only
 * the default for new lines), so none is stated.
 */
export function mapXeroContact(contact: XeroContact, ctx: XeroMapContext): XeroMapResult {
  const at = ctx.path ?? '';
  if (contact.IsSupplier === true && contact.IsCustomer !== true) {
    return ignore(`contact ${contact.ContactID} is a supplier only (IsSupplier true, IsCustomer false): taxsync reports sales`);
  }
  const updated = contact.UpdatedDateUTC;
  if (updated == null) return invalid('the contact has no UpdatedDateUTC', { [`${at}UpdatedDateUTC`]: ['missing: it orders the contact\'s versions'] });
  const data = compact<CustomerData>({
    name: contactName(contact),
    email: nonBlank(contact.EmailAddress),
    tax_number: nonBlank(contact.TaxNumber),
    addresses: contactAddresses(contact),
    status: nonBlank(contact.ContactStatus),
    updated_at: updated,
  });
  // Customers have no states to order within a millisecond: no precedence (docs/events.md).
  const head = envelope(`contact-${contact.ContactID}`, updated, undefined);
  return finalize([{ ...head, type: 'customer.upserted', record: { kind: 'customer', source: ctx.source, external_id: contact.ContactID }, data }]);
}
