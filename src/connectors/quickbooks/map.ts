import type { CanonicalEvent, CanonicalEventInput, CustomerData, InvoiceCustomer, InvoiceData, RefundData } from '../../domain/events.js';
import { summariseFields } from '../../domain/field-errors.js';
import { formatDecimal, isoExponent, type Decimal } from '../../domain/money.js';
import { canonicalOrInvalid } from '../shared/canonical.js';
import { compact, nonBlank, nonZero } from '../shared/fields.js';
import { ZERO, addProblem, documentAmounts, taxModeOf, type DocumentAmounts, type Problems, type TaxMode } from './lines.js';
import { quickBooksInstant, type QboCustomer, type QboSalesTransaction } from './schemas.js';
import { CONNECTOR_ID, addressesOf, eventIdOf, externalIdOf, isVoided, issuedAtOf, versionOf, type QboRecordEntity } from './values.js';

/**
 * QuickBooks Online entities (as the API answers them, after schemas.ts) → canonical events. PURE:
 * an entity and settings in, events out; the fetch jobs that read the entities do the I/O. Facts
 * and hand-computed examples: docs/research/accounting-payloads.md.
 */

export { CONNECTOR_ID, externalIdOf };
export { quickBooksCreditApplications, quickBooksNotices, type QuickBooksNotice, type QuickBooksNoticesResult } from './notices.js';

export interface QuickBooksMapContext {
  /** settings.source: the `source` of every record (DESIGN.md invariant 3). */
  source: string;
  /** The company's home currency (CompanyInfo): for a document without CurrencyRef, and to tell a foreign one. */
  homeCurrency?: string;
  /** The company's country, ISO 3166-1 alpha-2: QBO leaves it out of domestic addresses. */
  companyCountry?: string;
}

export interface QuickBooksCreditContext extends QuickBooksMapContext {
  /** The Ids of the invoices the credit memo is applied to, from the Payments that link it (quickBooksCreditApplications). */
  appliedTo?: readonly string[];
}

/** What every map function answers; `notes` are facts the events cannot carry, for the log. */
export type QuickBooksMapResult =
  | { kind: 'events'; events: CanonicalEvent[]; notes?: string[] }
  | { kind: 'ignore'; reason: string }
  | { kind: 'invalid'; message: string; fields: Record<string, string[]> };

type SaleEntity = 'Invoice' | 'SalesReceipt';
type CreditEntity = 'CreditMemo' | 'RefundReceipt';

/**
 * Same-instant order of a record's states (docs/events.md, "Ordering"). The SyncToken, sent as the
 * event's version, orders them first, so these only break ties of events without one (a deletion).
 * Nothing is `final`: the version already keeps a void from being undone by an older state.
 */
const SALE_PRECEDENCE = { active: 10, paid: 20, cancelled: 30, deleted: 40 } as const;
const CREDIT_PRECEDENCE = { created: 10, cancelled: 20, deleted: 30 } as const;

/** An Invoice → invoice.upserted; a voided one → invoice.cancelled. */
export function mapQuickBooksInvoice(invoice: QboSalesTransaction, ctx: QuickBooksMapContext): QuickBooksMapResult {
  return mapSale('Invoice', invoice, ctx);
}

/** A SalesReceipt (a sale paid at once) → invoice.upserted, status paid; a voided one → invoice.cancelled. */
export function mapQuickBooksSalesReceipt(receipt: QboSalesTransaction, ctx: QuickBooksMapContext): QuickBooksMapResult {
  return mapSale('SalesReceipt', receipt, ctx);
}

/** A CreditMemo → refund.created, linked when its invoice is known (QuickBooksCreditContext.appliedTo). */
export function mapQuickBooksCreditMemo(memo: QboSalesTransaction, ctx: QuickBooksCreditContext): QuickBooksMapResult {
  return mapCredit('CreditMemo', memo, ctx);
}

/** A RefundReceipt (money paid back) → refund.created; it names no invoice, so it is unlinked unless a LinkedTxn says otherwise. */
export function mapQuickBooksRefundReceipt(receipt: QboSalesTransaction, ctx: QuickBooksMapContext): QuickBooksMapResult {
  return mapCredit('RefundReceipt', receipt, ctx);
}

function mapSale(entity: SaleEntity, doc: QboSalesTransaction, ctx: QuickBooksMapContext): QuickBooksMapResult {
  const record = { kind: 'transaction' as const, source: ctx.source, external_id: externalIdOf(entity, doc.Id) };
  if (isVoided(doc)) {
    // Cancel what was sent: the voided document's zeroes are not restated, so the engine keeps the amounts it cancels.
    const data = compact({ number: nonBlank(doc.DocNumber), status: 'cancelled' as const, updated_at: doc.MetaData.LastUpdatedTime });
    return finalize([{ ...envelope(entity, doc, SALE_PRECEDENCE.cancelled), type: 'invoice.cancelled', record, data }]);
  }
  const read = readDocument(entity, doc, ctx);
  if (!read.ok) return read.result;
  const { mode, currency, amounts } = read;
  const paid = entity === 'SalesReceipt' || (doc.Balance?.isZero() === true && doc.TotalAmt?.isZero() === false);
  const status = paid ? 'paid' : 'active';
  const data = compact<InvoiceData>({
    number: nonBlank(doc.DocNumber),
    issued_at: issuedAtOf(doc),
    status,
    currency,
    exchange_rate: exchangeRateOf(doc, currency, ctx),
    tax_inclusive: mode === 'inclusive',
    customer: customerOf(doc, ctx),
    addresses: addressesOf(doc.BillAddr, doc.ShipAddr, ctx.companyCountry),
    lines: amounts.lines,
    discount: nonZero(amounts.discount),
    shipping: amounts.shipping,
    subtotal: doc.Line?.find((l) => l.DetailType === 'SubTotalLineDetail')?.Amount ?? undefined,
    tax_total: doc.TxnTaxDetail?.TotalTax ?? undefined,
    total: doc.TotalAmt ?? undefined,
    created_at: doc.MetaData.CreateTime ?? undefined,
    updated_at: doc.MetaData.LastUpdatedTime,
  });
  const notes = taxBeforeDiscount(doc, amounts.discount);
  return finalize([{ ...envelope(entity, doc, SALE_PRECEDENCE[status]), type: 'invoice.upserted', record, data }], notes);
}

/**
 * ApplyTaxAfterDiscount false: QuickBooks taxed the amounts before the transaction discount.
 * taxsync sends the discount as it is (the customer paid the discounted amount, and refund shares
 * are shares of that) and QuickBooks' tax as tax_total; the engine, which spreads a transaction
 * discount over the lines before taxing them, computes less tax (invoice 271: 19.80, not 22.00).
 */
function taxBeforeDiscount(doc: QboSalesTransaction, discount: Decimal): string[] {
  const tax = doc.TxnTaxDetail?.TotalTax ?? ZERO;
  if (doc.ApplyTaxAfterDiscount !== false || discount.isZero() || tax.isZero()) return [];
  return [
    `ApplyTaxAfterDiscount is false: QuickBooks taxed the lines before the discount of ${formatDecimal(discount)} (tax ${formatDecimal(tax)}); the tax engine spreads the discount over the lines first, so it computes less tax than QuickBooks charged`,
  ];
}

function mapCredit(entity: CreditEntity, doc: QboSalesTransaction, ctx: QuickBooksCreditContext): QuickBooksMapResult {
  const record = { kind: 'transaction' as const, source: ctx.source, external_id: externalIdOf(entity, doc.Id) };
  if (isVoided(doc)) {
    const data = compact({ number: nonBlank(doc.DocNumber), updated_at: doc.MetaData.LastUpdatedTime });
    return finalize([{ ...envelope(entity, doc, CREDIT_PRECEDENCE.cancelled), type: 'refund.cancelled', record, data }]);
  }
  const read = readDocument(entity, doc, ctx);
  if (!read.ok) return read.result;
  const { mode, currency, amounts } = read;
  const total = doc.TotalAmt;
  if (total === null || total === undefined) return invalid(entity, { [`${entity}.TotalAmt`]: ['missing: the amount given back is unknown'] });
  if (total.isZero()) return { kind: 'ignore', reason: `${entity} ${doc.Id} gives nothing back (TotalAmt 0)` };
  const tax = doc.TxnTaxDetail?.TotalTax ?? ZERO;
  const link = linkOf(doc, entity === 'CreditMemo' ? ctx.appliedTo : undefined);
  const notes = link.note === undefined ? [] : [link.note];
  // A refund carries no transaction discount: with one, its lines would not add up to its amount, so only the amount is sent.
  const lines = amounts.discount.isZero() && amounts.lines.length > 0 ? amounts.lines : undefined;
  if (!amounts.discount.isZero()) notes.push(`${entity} ${doc.Id} has a discount of ${formatDecimal(amounts.discount)}: sent by its amount, without its lines`);
  const data = compact<RefundData>({
    invoice_external_id: link.invoice,
    number: nonBlank(doc.DocNumber),
    issued_at: issuedAtOf(doc),
    currency,
    // TotalAmt is gross after discounts in either pricing, so less its tax it is the net given back, shipping included.
    amount: total.minus(tax),
    shipping_amount: amounts.shippingNet,
    tax_amount: tax,
    tax_inclusive: mode === 'inclusive',
    lines,
    customer: customerOf(doc, ctx),
    addresses: addressesOf(doc.BillAddr, doc.ShipAddr, ctx.companyCountry),
    created_at: doc.MetaData.CreateTime ?? undefined,
    updated_at: doc.MetaData.LastUpdatedTime,
  });
  return finalize([{ ...envelope(entity, doc, CREDIT_PRECEDENCE.created), type: 'refund.created', record, data }], notes);
}

/**
 * The invoice a credit links to. A CreditMemo names none itself (a LinkedTxn naming one is taken
 * if QBO ever sends it): it is applied through a Payment that links both, which the fetch job reads
 * and passes in as `appliedTo`. Until then — or when it was applied to several invoices, which a
 * refund cannot say — the credit is an unlinked refund, taxed on its own lines.
 */
function linkOf(doc: QboSalesTransaction, appliedTo: readonly string[] | undefined): { invoice?: string; note?: string } {
  const named = (doc.LinkedTxn ?? []).flatMap((l) => (l.TxnType === 'Invoice' || l.TxnType === 'SalesReceipt' ? [externalIdOf(l.TxnType, l.TxnId)] : []));
  const invoices = [...new Set([...named, ...(appliedTo ?? []).map((id) => externalIdOf('Invoice', id))])];
  if (invoices.length === 1) return { invoice: invoices[0]! };
  if (invoices.length > 1) return { note: `applied to ${invoices.join(', ')}: a refund links one invoice, so it is sent unlinked` };
  return {};
}

/** A Customer → customer.upserted. */
export function mapQuickBooksCustomer(customer: QboCustomer, ctx: QuickBooksMapContext): QuickBooksMapResult {
  const person = [nonBlank(customer.GivenName), nonBlank(customer.FamilyName)].filter((p) => p !== undefined).join(' ');
  const data = compact<CustomerData>({
    name: nonBlank(customer.DisplayName) ?? nonBlank(customer.CompanyName) ?? (person === '' ? undefined : person),
    email: nonBlank(customer.PrimaryEmailAddr?.Address),
    addresses: addressesOf(customer.BillAddr, customer.ShipAddr, ctx.companyCountry),
    // The primary tax id (ABN, VAT number) first; else the resale certificate number of a reseller.
    tax_number: nonBlank(customer.PrimaryTaxIdentifier) ?? nonBlank(customer.ResaleNum),
    // Taxable false is QBO's sales-tax exemption (a reseller, a charity …): the engine's retail_exempt.
    tax_exempt: customer.Taxable === null || customer.Taxable === undefined ? undefined : !customer.Taxable,
    // QBO never deletes a customer: it makes it inactive.
    status: customer.Active === false ? 'inactive' : customer.Active === true ? 'active' : undefined,
    created_at: customer.MetaData.CreateTime ?? undefined,
    updated_at: customer.MetaData.LastUpdatedTime,
  });
  const record = { kind: 'customer' as const, source: ctx.source, external_id: externalIdOf('Customer', customer.Id) };
  return finalize([{ ...envelope('Customer', customer), type: 'customer.upserted', record, data }]);
}

/**
 * A deleted entity (the delete answer `{status: "Deleted", Id}`, a Delete notice, or the customer a
 * Merge took away) → the `*.deleted` event of its kind. Nothing of it can be read any more, so its
 * time is the notice's: `occurredAt`.
 */
export function mapQuickBooksDeleted(entity: QboRecordEntity, deleted: { Id: string }, ctx: QuickBooksMapContext & { occurredAt: string }): QuickBooksMapResult {
  const at = quickBooksInstant(ctx.occurredAt);
  if (at === undefined) return invalid(entity, { occurredAt: ['must be an ISO 8601 date-time with a time zone'] });
  const head = { id: eventIdOf(entity, deleted.Id, at, 'deleted'), occurred_at: at, connector: CONNECTOR_ID, data: {} };
  const external_id = externalIdOf(entity, deleted.Id);
  if (entity === 'Customer') return finalize([{ ...head, type: 'customer.deleted', record: { kind: 'customer', source: ctx.source, external_id } }]);
  const record = { kind: 'transaction' as const, source: ctx.source, external_id };
  if (entity === 'Invoice' || entity === 'SalesReceipt') return finalize([{ ...head, precedence: SALE_PRECEDENCE.deleted, type: 'invoice.deleted', record }]);
  return finalize([{ ...head, precedence: CREDIT_PRECEDENCE.deleted, type: 'refund.deleted', record }]);
}

// ——— shared parts ———

function readDocument(
  entity: SaleEntity | CreditEntity,
  doc: QboSalesTransaction,
  ctx: QuickBooksMapContext,
): { ok: true; mode: TaxMode; currency: string; amounts: DocumentAmounts } | { ok: false; result: QuickBooksMapResult } {
  const problems: Problems = {};
  const currency = (nonBlank(doc.CurrencyRef?.value) ?? ctx.homeCurrency)?.toUpperCase();
  if (currency === undefined) addProblem(problems, `${entity}.CurrencyRef`, 'missing, and the company home currency was not given');
  const mode = taxModeOf(doc, entity, problems);
  const amounts = mode === undefined ? undefined : documentAmounts(doc, entity, mode, isoExponent(currency ?? ''), problems);
  if (Object.keys(problems).length > 0 || mode === undefined || amounts === undefined || currency === undefined) return { ok: false, result: invalid(entity, problems) };
  return { ok: true, mode, currency, amounts };
}

/** The inline customer: CustomerRef, the document's BillEmail and addresses. */
function customerOf(doc: QboSalesTransaction, ctx: QuickBooksMapContext): InvoiceCustomer | undefined {
  const id = doc.CustomerRef?.value;
  if (id === undefined) return undefined;
  return compact<InvoiceCustomer>({
    external_id: externalIdOf('Customer', id),
    name: nonBlank(doc.CustomerRef?.name),
    email: nonBlank(doc.BillEmail?.Address),
    addresses: addressesOf(doc.BillAddr, doc.ShipAddr, ctx.companyCountry),
  });
}

/**
 * QBO's ExchangeRate converts to the company's home currency. On a home-currency document it is 1
 * and says nothing; sent, it could be read as a rate to the engine's own currency, so it is sent
 * only for a foreign-currency document (without a home currency given: only when it is not 1).
 */
function exchangeRateOf(doc: QboSalesTransaction, currency: string, ctx: QuickBooksMapContext): Decimal | undefined {
  const rate = doc.ExchangeRate ?? undefined;
  if (rate === undefined) return undefined;
  if (ctx.homeCurrency !== undefined) return currency === ctx.homeCurrency.toUpperCase() ? undefined : rate;
  return rate.equals(1) ? undefined : rate;
}

function envelope(entity: QboRecordEntity, doc: { Id: string; SyncToken?: string | null; MetaData: { LastUpdatedTime: string } }, precedence?: number) {
  const at = doc.MetaData.LastUpdatedTime;
  const version = versionOf(doc.SyncToken);
  return {
    id: eventIdOf(entity, doc.Id, at, doc.SyncToken ?? 'none'),
    occurred_at: at,
    ...(precedence === undefined ? {} : { precedence }),
    ...(version === undefined ? {} : { version }),
    connector: CONNECTOR_ID,
  };
}

function invalid(entity: string, fields: Record<string, string[]>): QuickBooksMapResult {
  return { kind: 'invalid', message: `QuickBooks ${entity} cannot be mapped: ${summariseFields(fields, 5)}`, fields };
}

/** Every mapped event passes the canonical schema, or the result is invalid naming the event field; `notes` ride along with the events. */
function finalize(inputs: CanonicalEventInput[], notes: string[] = []): QuickBooksMapResult {
  const checked = canonicalOrInvalid(inputs);
  return checked.kind === 'events' && notes.length > 0 ? { ...checked, notes } : checked;
}
