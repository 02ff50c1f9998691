import { TransactionRequest, type TransactionItemRequest, type TransactionStatus } from '../api/schemas/tax-engine.js';
import { RefundData } from '../domain/events.js';
import { formatDecimal, type Decimal } from '../domain/money.js';
import { ZERO, inlineCustomer, mapLines, transactionAddresses } from './common.js';
import { FRACTION_DECIMALS, exactFraction, refundBasis, type OriginalTransaction } from './refund-fraction.js';
import {
  Problems,
  checked,
  dataFields,
  ignore,
  invalid,
  wait,
  wrongKind,
  type MappingContext,
  type NotSent,
  type RefundMapResult,
} from './result.js';

export interface RefundContext extends MappingContext {
  /** The original invoice, when the tax engine has it (absent: a linked refund waits). */
  original?: OriginalTransaction;
  /** Σ of the fractions of the OTHER refunds of the same invoice already sent. */
  alreadyRefunded: Decimal;
}

export interface RefundCancelContext extends RefundContext {
  /**
   * The share this refund already claimed of its invoice (what the processor recorded for it): a
   * cancellation that takes no more is never held up by the invoice's other refunds; one that
   * raises the refund's share is checked against them like a new refund. @defaultValue 0
   */
  claimed?: Decimal;
  /** The refund data taxsync last held for this record (from its state store), when any. */
  previous?: RefundData;
}

const PERCENTAGE = 'refund_info.refund_linked_percentage';
const fmt = formatDecimal;

/**
 * refund.created → body of `PUT /v1/transactions/` (transaction_type refund). With an invoice it
 * is a linked refund (invariant 4): sent only once the original is in the tax engine, with the
 * exact share of it refunded; without one, an unlinked refund taxed on its own items.
 */
export function mapRefund(data: RefundData, ctx: RefundContext): RefundMapResult {
  return buildRefund(data, ctx, 'active', 'always');
}

/**
 * refund.cancelled → the same refund upserted with transaction_status cancelled. The cancellation's
 * data (any subset) is laid over the previous refund data. A refund taxsync never held was never
 * sent, so there is nothing to cancel: ignored. A cancellation claiming no more than the refund's
 * share before (`ctx.claimed`) is never held up by other refunds; one that raises it is checked
 * against them like a new refund (a cancelled refund keeps its share in the engine).
 */
export function mapRefundCancelled(data: Partial<RefundData>, ctx: RefundCancelContext): RefundMapResult {
  if (ctx.previous === undefined) {
    return ignore(`refund ${ctx.key.external_id} was cancelled, but taxsync never held it (it was never sent): nothing to cancel in the tax engine`);
  }
  const merged = mergeCancellation(data, ctx.previous);
  if (!merged.success) return invalid(`refund ${ctx.key.external_id}`, dataFields(merged.error.issues));
  return buildRefund(merged.data, ctx, 'cancelled', ctx.claimed ?? 'never');
}

function mergeCancellation(data: Partial<RefundData>, previous: RefundData) {
  const stated = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
  return RefundData.safeParse({ ...previous, ...stated });
}

/**
 * The whole refund a `refund.cancelled` describes (its data laid over `previous`), as
 * mapRefundCancelled sends it; undefined without a previous refund or when that is not a whole
 * refund. Kept as the version's applied copy, so the next cancellation, a replay, or the
 * refund's deletion (which frees its share of the invoice) still knows the refund.
 */
export function cancelledRefund(data: Partial<RefundData>, previous: RefundData | undefined): RefundData | undefined {
  if (previous === undefined) return undefined;
  const merged = mergeCancellation(data, previous);
  return merged.success ? merged.data : undefined;
}

/**
 * When the cumulative check (the invoice's other refunds plus this one ≤ 1) applies: always (a new
 * refund), to a share above a given one (a cancellation: the share the refund already claimed), or
 * never (a cancellation whose claimed share is not known).
 */
type CumulativeCheck = 'always' | 'never' | Decimal;

function buildRefund(data: RefundData, ctx: RefundContext, status: TransactionStatus, check: CumulativeCheck): RefundMapResult {
  const what = `refund ${ctx.key.external_id}`;
  const kind = wrongKind(ctx.key, 'transaction', what);
  if (kind !== undefined) return kind;
  return data.invoice_external_id === undefined
    ? unlinked(data, ctx, status, what)
    : linked(data, data.invoice_external_id, ctx, status, what, check);
}

function common(data: RefundData, ctx: RefundContext, status: TransactionStatus) {
  return {
    source: ctx.key.source,
    external_id: ctx.key.external_id,
    transaction_type: 'refund',
    transaction_status: status,
    ...(data.number === undefined || data.number === '' ? {} : { document_name: data.number }),
    transaction_date: data.issued_at,
    currency_details: { currency: data.currency },
    ...(ctx.settings.override_threshold ? { override_threshold: true } : {}),
    ...(data.created_at === undefined ? {} : { external_created_at: data.created_at }),
    ...(data.updated_at === undefined ? {} : { external_updated_at: data.updated_at }),
  };
}

function linked(
  data: RefundData,
  invoiceId: string,
  ctx: RefundContext,
  status: TransactionStatus,
  what: string,
  check: CumulativeCheck,
): RefundMapResult {
  const original = ctx.original;
  if (original === undefined) {
    return wait(`${what} waits for its invoice ${invoiceId} (source ${ctx.key.source}) to exist in the tax engine`);
  }
  const basis = refundBasis(data, original);
  if (!basis.ok) return invalid(what, { [basis.field]: [basis.message] });
  const fail = (message: string): NotSent => invalid(what, { [PERCENTAGE]: [message] });
  if (!basis.denominator.greaterThan(ZERO)) {
    return fail(`invoice ${invoiceId} amounts to ${fmt(basis.denominator)} (${basis.explanation}): a refund can only take a share of a positive amount`);
  }
  if (!basis.numerator.greaterThan(ZERO)) return fail(`the refund takes no positive share of invoice ${invoiceId}: ${basis.explanation}`);

  const { value: fraction, exact } = exactFraction(basis.numerator, basis.denominator);
  const shown = `${fmt(fraction)}${exact ? '' : ` (rounded down to ${FRACTION_DECIMALS} places)`}`;
  if (fraction.greaterThan(1)) return fail(`${what} exceeds its invoice ${invoiceId}: ${basis.explanation} = ${shown}, more than the whole (1)`);
  if (fraction.isZero()) return fail(`${what} is too small a share of invoice ${invoiceId} to express in ${FRACTION_DECIMALS} decimal places: ${basis.explanation}`);
  const together = ctx.alreadyRefunded.plus(fraction);
  const claimsMore = check === 'always' || (check !== 'never' && fraction.greaterThan(check));
  if (claimsMore && together.greaterThan(1)) {
    return fail(
      `${what} takes ${shown} of invoice ${invoiceId}, whose other refunds already took ${fmt(ctx.alreadyRefunded)}: together ${fmt(together)}, more than the whole invoice (1)`,
    );
  }

  const problems = new Problems();
  const lines = data.lines ?? [];
  const originalInclusive = original.invoice?.tax_inclusive ?? original.is_tax_inclusive;
  // No lines (an amount-only refund): one item at the refund's net amount, never `items: []`.
  const amountOnly = lines.length === 0;
  const items = amountOnly
    ? [refundItem(data, netAmount(data, originalInclusive === true), ctx)]
    : mapLines(lines, ctx.settings, data.currency, problems).items;
  if (problems.any) return invalid(what, problems.fields);

  const customer = data.customer ?? original.invoice?.customer;
  const addresses = transactionAddresses(data.addresses ?? original.invoice?.addresses, ctx.settings);
  // The single item is net of tax, so that refund is tax-exclusive whatever its invoice was.
  const inclusive = amountOnly ? false : (data.tax_inclusive ?? originalInclusive);
  const body = {
    ...common(data, ctx, status),
    ...(inclusive === undefined ? {} : { is_tax_inclusive: inclusive }),
    created_from: original.id,
    refund_info: { is_refund_linked: true, refund_linked_percentage: fmt(fraction) },
    ...(addresses === undefined ? {} : { addresses }),
    ...(customer === undefined ? {} : { customer_details: inlineCustomer(customer, ctx.key.source) }),
    items,
  };
  const result = checked(TransactionRequest, body, what);
  if (!result.ok) return result.result;
  const notes = [`refund_linked_percentage ${shown} = ${basis.explanation}`];
  return { kind: 'send', body: result.body, fraction, notes };
}

function unlinked(data: RefundData, ctx: RefundContext, status: TransactionStatus, what: string): RefundMapResult {
  if (!data.amount.greaterThan(ZERO)) return invalid(what, { 'data.amount': [`a refund must refund a positive amount (got ${fmt(data.amount)})`] });
  const problems = new Problems();
  const notes: string[] = [];
  const lines = data.lines ?? [];
  const shipping = data.shipping_amount ?? ZERO;
  const inclusive = data.tax_inclusive ?? false;
  // A shipping part is tax-exclusive (it is part of `amount`); it cannot join gross line prices.
  const useLines = lines.length > 0 && !(inclusive && !shipping.isZero());
  if (lines.length > 0 && !useLines) {
    notes.push('lines not sent: their prices include tax but the shipping part does not, so the refund is one item at its amount excluding tax');
  }

  let items: TransactionItemRequest[];
  let shippingFee: { amount: string; tax_code?: string } | null = null;
  if (useLines) {
    items = mapLines(lines, ctx.settings, data.currency, problems).items;
    if (shipping.isNegative() && !shipping.isZero()) problems.add('shipping_fee.amount', `must not be negative (got ${fmt(shipping)})`);
    const code = ctx.settings.tax_codes.shipping;
    if (!shipping.isZero()) shippingFee = { amount: fmt(shipping), ...(code === undefined ? {} : { tax_code: code }) };
  } else {
    items = [refundItem(data, data.amount, ctx)];
  }
  if (problems.any) return invalid(what, problems.fields);

  const addresses = transactionAddresses(data.addresses, ctx.settings);
  const body = {
    ...common(data, ctx, status),
    is_tax_inclusive: useLines ? inclusive : false,
    refund_info: { is_refund_linked: false },
    ...(addresses === undefined ? {} : { addresses }),
    ...(data.customer === undefined ? {} : { customer_details: inlineCustomer(data.customer, ctx.key.source) }),
    items,
    shipping_fee: shippingFee,
  };
  const result = checked(TransactionRequest, body, what);
  if (!result.ok) return result.result;
  return { kind: 'send', body: result.body, fraction: ZERO, ...(notes.length === 0 ? {} : { notes }) };
}

/** The refund's amount before tax: `amount`, less its tax when it follows a tax-inclusive invoice's pricing. */
export function netAmount(data: RefundData, invoiceInclusive: boolean): Decimal {
  return data.priced_as_invoice === true && invoiceInclusive && data.tax_amount !== undefined ? data.amount.minus(data.tax_amount) : data.amount;
}

/** One item for a refund the source gives without lines: "Refund", one unit at its net amount. */
function refundItem(data: RefundData, net: Decimal, ctx: RefundContext): TransactionItemRequest {
  const code = ctx.settings.tax_codes.default;
  return {
    name: 'Refund',
    ...(data.reason === undefined || data.reason === '' ? {} : { description: data.reason }),
    ...(code === undefined ? {} : { tax_code: code }),
    unit_price: fmt(net),
    quantity: '1',
  };
}
