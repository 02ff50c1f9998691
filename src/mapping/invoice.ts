import { TransactionRequest, type ShippingFeeRequest, type TransactionStatus } from '../api/schemas/tax-engine.js';
import { InvoiceData } from '../domain/events.js';
import { formatDecimal, type Decimal } from '../domain/money.js';
import {
  ZERO,
  checkExchangeRate,
  checkTransactionDiscount,
  inlineCustomer,
  mapLines,
  transactionAddresses,
} from './common.js';
import { Problems, checked, dataFields, ignore, invalid, wrongKind, type MapResult, type MappingContext } from './result.js';
import type { MappingSettings } from './settings.js';

export interface InvoiceCancelContext extends MappingContext {
  /** The invoice data taxsync last held for this record (from its state store), when any. */
  previous?: InvoiceData;
}

/** invoice.upserted → body of `PUT /v1/transactions/` (transaction_type invoice). */
export function mapInvoice(data: InvoiceData, ctx: MappingContext): MapResult<TransactionRequest> {
  return buildInvoice(data, ctx, data.status);
}

/**
 * invoice.cancelled → the same invoice with transaction_status cancelled. The cancellation's data
 * (any subset) is laid over the previous invoice data, field by field, so the newest stated values
 * win. With no previous data the cancellation must carry a whole invoice; otherwise there is
 * nothing to build a body from and it is ignored.
 */
export function mapInvoiceCancelled(data: Partial<InvoiceData>, ctx: InvoiceCancelContext): MapResult<TransactionRequest> {
  const merged = mergeCancellation(data, ctx.previous);
  if (!merged.success) {
    if (ctx.previous === undefined) {
      return ignore(
        `invoice ${ctx.key.external_id} was cancelled, but taxsync holds no invoice data for it and the cancellation carries no whole invoice: nothing to cancel in the tax engine`,
      );
    }
    return invalid(`invoice ${ctx.key.external_id}`, dataFields(merged.error.issues));
  }
  return buildInvoice(merged.data, ctx, 'cancelled');
}

function mergeCancellation(data: Partial<InvoiceData>, previous: InvoiceData | undefined) {
  const stated = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
  return InvoiceData.safeParse({ ...previous, ...stated, status: 'cancelled' });
}

/**
 * The whole invoice an `invoice.cancelled` describes (its data laid over `previous`, status
 * cancelled), as mapInvoiceCancelled sends it; undefined when that is not a whole invoice. Kept
 * as the version's applied copy, so the next cancellation (or a replay) is laid over it.
 */
export function cancelledInvoice(data: Partial<InvoiceData>, previous: InvoiceData | undefined): InvoiceData | undefined {
  const merged = mergeCancellation(data, previous);
  return merged.success ? merged.data : undefined;
}

/** shipping_fee: shipping net of its discount; null when there is none (so an update clears an old fee). */
export function shippingFee(
  shipping: InvoiceData['shipping'],
  settings: MappingSettings,
  problems: Problems,
): ShippingFeeRequest | null {
  if (shipping === undefined) return null;
  const amount: Decimal = shipping.amount.minus(shipping.discount ?? ZERO);
  if (amount.isZero()) return null;
  if (amount.isNegative()) {
    problems.add('shipping_fee.amount', `shipping ${formatDecimal(shipping.amount)} less its discount ${formatDecimal(shipping.discount ?? ZERO)} is negative`);
  }
  const taxCode = settings.tax_codes.shipping ?? (shipping.tax_code === '' ? undefined : shipping.tax_code);
  return { amount: formatDecimal(amount), ...(taxCode === undefined ? {} : { tax_code: taxCode }) };
}

function buildInvoice(data: InvoiceData, ctx: MappingContext, status: TransactionStatus): MapResult<TransactionRequest> {
  const what = `invoice ${ctx.key.external_id}`;
  const kind = wrongKind(ctx.key, 'transaction', what);
  if (kind !== undefined) return kind;
  if (data.lines.length === 0) {
    return invalid(what, { items: ['the invoice has no lines (data.lines is empty); the tax engine needs at least one item to compute tax'] });
  }

  const { settings } = ctx;
  const problems = new Problems();
  const { items, discountable } = mapLines(data.lines, settings, data.currency, problems);
  const discount = data.discount;
  if (discount !== undefined) checkTransactionDiscount(discount, discountable, data.currency, problems);
  checkExchangeRate(data.exchange_rate, problems);
  const fee = shippingFee(data.shipping, settings, problems);
  if (problems.any) return invalid(what, problems.fields);

  const addresses = transactionAddresses(data.addresses, settings);
  const body = {
    source: ctx.key.source,
    external_id: ctx.key.external_id,
    transaction_type: 'invoice',
    transaction_status: status,
    ...(data.number === undefined || data.number === '' ? {} : { document_name: data.number }),
    transaction_date: data.issued_at,
    is_tax_inclusive: data.tax_inclusive,
    currency_details: {
      currency: data.currency,
      ...(data.exchange_rate === undefined ? {} : { manual_exchange_rate: formatDecimal(data.exchange_rate) }),
    },
    ...(addresses === undefined ? {} : { addresses }),
    ...(data.customer === undefined ? {} : { customer_details: inlineCustomer(data.customer, ctx.key.source) }),
    items,
    ...(discount === undefined || discount.isZero() ? {} : { transaction_level_discount: formatDecimal(discount) }),
    shipping_fee: fee,
    ...(settings.override_threshold ? { override_threshold: true } : {}),
    ...(data.created_at === undefined ? {} : { external_created_at: data.created_at }),
    ...(data.updated_at === undefined ? {} : { external_updated_at: data.updated_at }),
  };
  const result = checked(TransactionRequest, body, what);
  return result.ok ? { kind: 'send', body: result.body } : result.result;
}
