import type { Address, CanonicalEventInput, CustomerData, InvoiceData, Line, RefundData } from '../../domain/events.js';
import { Money, type Decimal } from '../../domain/money.js';
import { refundExternalId } from '../../domain/record-key.js';
import { compact, exactUnits, nonBlank, nonZero, sum, utcTimestamp, type MapResult } from '../shared/fields.js';
import type {
  ShopifyAddress,
  ShopifyCustomer,
  ShopifyCustomerPayload,
  ShopifyOrder,
  ShopifyRefund,
  ShopifyRefundLineItem,
  ShopifyTaxLine,
} from './schemas.js';

/**
 * Shopify payloads → canonical events. Pure: validated input plus settings in, events out
 * (docs/connectors-shopify-woocommerce.md has every rule with its reason).
 */

export const CONNECTOR_ID = 'shopify';

export interface ShopifyMapContext {
  /** settings.source: the `source` of every record. */
  source: string;
  /** The X-Shopify-Topic of the delivery. */
  topic: string;
}

export type ShopifyMapResult = MapResult<CanonicalEventInput>;

type Amount = Decimal;

/** Financial states in which the customer has paid (refunds are linked refund events of their own). */
const PAID_STATES = new Set(['paid', 'partially_refunded', 'refunded']);

/**
 * One id per change of a record: resource, record id and the record's own change time, and for
 * orders their status: updated_at has one-second resolution, so a payment and a cancellation of
 * the same second are two changes (two ids), while the same change delivered by orders/updated
 * and orders/paid (or retried for hours) has one id.
 */
export function shopifyEventId(resource: 'orders' | 'refunds' | 'customers', id: string, changedAt: string, status?: string): string {
  return `${CONNECTOR_ID}:${resource}:${id}:${utcTimestamp(changedAt)}${status === undefined ? '' : `:${status}`}`;
}

/**
 * The order of an order's states within one second (docs/connectors-shopify-woocommerce.md,
 * "Ordering"): open < paid < cancelled. Shopify cannot reopen a cancelled order, so a cancellation
 * is final: a state arriving after it is stale whatever its updated_at.
 */
const ORDER_PRECEDENCE: Readonly<Record<InvoiceData['status'], number>> = { active: 10, paid: 20, cancelled: 30 };

export function mapShopifyOrder(order: ShopifyOrder, ctx: ShopifyMapContext): ShopifyMapResult {
  const cancelledTopic = ctx.topic === 'orders/cancelled';
  const data = invoiceData(order, cancelledTopic);
  return {
    kind: 'events',
    events: [
      {
        id: shopifyEventId('orders', order.id, order.updated_at, data.status),
        type: cancelledTopic ? 'invoice.cancelled' : 'invoice.upserted',
        occurred_at: utcTimestamp(order.updated_at),
        precedence: ORDER_PRECEDENCE[data.status],
        ...(data.status === 'cancelled' ? { final: true } : {}),
        connector: CONNECTOR_ID,
        record: { kind: 'transaction', source: ctx.source, external_id: order.id },
        data,
      },
    ],
  };
}

function invoiceData(order: ShopifyOrder, cancelled: boolean): InvoiceData {
  const issuedAt = (order.created_at ?? order.processed_at) as string;
  const status: InvoiceData['status'] =
    cancelled || order.cancelled_at ? 'cancelled' : PAID_STATES.has(order.financial_status ?? '') ? 'paid' : 'active';
  return compact({
    number: nonBlank(order.name),
    issued_at: utcTimestamp(issuedAt),
    status,
    currency: order.currency,
    tax_inclusive: order.taxes_included,
    customer: order.customer ? { external_id: order.customer.id, ...customerData(order.customer) } : undefined,
    addresses: addresses(order.billing_address, order.shipping_address),
    lines: order.line_items.map((item) =>
      compact<Line>({
        id: item.id ?? undefined,
        product_id: item.product_id ?? undefined,
        sku: nonBlank(item.sku),
        name: nonBlank(item.name) ?? nonBlank(item.title),
        unit_price: item.price,
        quantity: item.quantity,
        // Every discount Shopify applied to the line — its own and its share of order-level
        // discounts — is in its discount_allocations; no separate order discount is sent.
        discount: nonZero(sum(item.discount_allocations.map((d) => d.amount))),
        ...taxOf(item.tax_lines),
        taxable: notTaxable(item),
      }),
    ),
    shipping: shippingData(order),
    // The totals as first sold (total_*), not current_*: refunds travel as linked refund events,
    // so subtracting them here as well would count them twice.
    subtotal: order.subtotal_price ?? undefined,
    tax_total: order.total_tax ?? undefined,
    total: order.total_price ?? undefined,
    created_at: order.created_at ? utcTimestamp(order.created_at) : undefined,
    updated_at: utcTimestamp(order.updated_at),
  });
}

/**
 * `false` for a line that is not a taxable supply: Shopify's `taxable: false` (donations, exempt
 * products) or a gift card sold (`gift_card: true`; tax is due when it is spent). Else absent.
 */
function notTaxable(item: { taxable?: boolean | null; gift_card?: boolean | null }): false | undefined {
  return item.taxable === false || item.gift_card === true ? false : undefined;
}

function shippingData(order: ShopifyOrder): InvoiceData['shipping'] {
  const lines = order.shipping_lines.filter((l) => l.is_removed !== true);
  if (lines.length === 0) return undefined;
  const taxLines = lines.flatMap((l) => l.tax_lines);
  return compact({
    amount: sum(lines.map((l) => l.price)),
    discount: nonZero(sum(lines.flatMap((l) => l.discount_allocations.map((d) => d.amount)))),
    tax_amount: taxLines.length > 0 ? sum(taxLines.map((t) => t.price)) : undefined,
  });
}

/** Tax charged on a line, and its rate when a single tax applies (several rates do not add up to one). */
function taxOf(taxLines: readonly ShopifyTaxLine[]): { tax_amount?: Amount; tax_rate?: Amount } {
  if (taxLines.length === 0) return {};
  const only = taxLines.length === 1 ? taxLines[0] : undefined;
  return compact({ tax_amount: sum(taxLines.map((t) => t.price)), tax_rate: only?.rate ?? undefined });
}

function address(a: ShopifyAddress | null | undefined): Address | undefined {
  if (!a) return undefined;
  const street = [nonBlank(a.address1), nonBlank(a.address2)].filter((s) => s !== undefined).join(', ');
  const out = compact<Address>({
    street: street === '' ? undefined : street,
    city: nonBlank(a.city),
    state: nonBlank(a.province_code),
    zip: nonBlank(a.zip),
    country: nonBlank(a.country_code)?.toUpperCase(),
  });
  return Object.keys(out).length === 0 ? undefined : out;
}

function addresses(billing: ShopifyAddress | null | undefined, shipping: ShopifyAddress | null | undefined) {
  const out = compact({ billing: address(billing), shipping: address(shipping) });
  return Object.keys(out).length === 0 ? undefined : out;
}

function customerData(customer: ShopifyCustomer): CustomerData {
  const name = [nonBlank(customer.first_name), nonBlank(customer.last_name)].filter((s) => s !== undefined).join(' ');
  // Shopify's tax_exemptions are region-specific (US_CA_RESELLER_EXEMPTION…); taxsync keeps
  // only their effect on the flag: any exemption makes the customer tax-exempt.
  const exempt = customer.tax_exempt === true || customer.tax_exemptions.length > 0 ? true : (customer.tax_exempt ?? undefined);
  return compact<CustomerData>({
    name: name === '' ? undefined : name,
    email: nonBlank(customer.email),
    // The default address is the customer's one address taxsync knows: both billing and shipping.
    addresses: addresses(customer.default_address, customer.default_address),
    tax_exempt: exempt,
    status: nonBlank(customer.state),
    created_at: customer.created_at ? utcTimestamp(customer.created_at) : undefined,
    updated_at: customer.updated_at ? utcTimestamp(customer.updated_at) : undefined,
  });
}

export function mapShopifyCustomer(customer: ShopifyCustomerPayload, ctx: ShopifyMapContext): ShopifyMapResult {
  return {
    kind: 'events',
    events: [
      {
        id: shopifyEventId('customers', customer.id, customer.updated_at),
        type: 'customer.upserted',
        occurred_at: utcTimestamp(customer.updated_at),
        connector: CONNECTOR_ID,
        record: { kind: 'customer', source: ctx.source, external_id: customer.id },
        data: customerData(customer),
      },
    ],
  };
}

/**
 * A refund: `amount` is what it gives back without tax, shipping included —
 *   Σ refund_line_items[].subtotal  +  shipping refunded
 * where shipping refunded is Σ refund_shipping_lines[].subtotal_amount_set when the payload has
 * any (newer API versions), otherwise −Σ order_adjustments[kind=shipping_refund].amount, signed.
 * Never both: Shopify reports the same shipping refund in both places.
 * `tax_amount` = Σ refund_line_items[].total_tax + shipping tax refunded (refund_shipping_lines'
 * total_tax_set when given, else −Σ tax_amount of the shipping_refund adjustments).
 * Other adjustments (refund_discrepancy) are not tax and are left out.
 */
export function mapShopifyRefund(refund: ShopifyRefund, ctx: ShopifyMapContext): ShopifyMapResult {
  const createdAt = (refund.created_at ?? refund.processed_at) as string;
  const shipping = shippingRefund(refund);
  const itemsAmount = sum(refund.refund_line_items.map((l) => l.subtotal));
  const itemsTax = sum(refund.refund_line_items.map((l) => l.total_tax));
  const amount = itemsAmount.plus(shipping.amount);
  const tax = itemsTax.plus(shipping.tax);
  if (amount.isZero() && tax.isZero()) {
    return { kind: 'ignore', reason: 'refund gives back no items and no shipping (a restock or an amount-only adjustment)' };
  }
  const lines = refund.refund_line_items.map(refundLine);
  const data = compact<RefundData>({
    invoice_external_id: refund.order_id,
    issued_at: utcTimestamp(createdAt),
    currency: refund.currency,
    amount,
    shipping_amount: nonZero(shipping.amount),
    tax_amount: tax,
    // Shopify's refund subtotals follow the order's pricing (tax included in a taxes_included
    // shop) and the payload does not say which: the mapping nets the tax out when it must.
    priced_as_invoice: true,
    lines: lines.length > 0 ? lines : undefined,
    reason: nonBlank(refund.note),
    created_at: utcTimestamp(createdAt),
  });
  return {
    kind: 'events',
    events: [
      {
        id: shopifyEventId('refunds', refund.id, createdAt),
        type: 'refund.created',
        occurred_at: utcTimestamp(createdAt),
        connector: CONNECTOR_ID,
        record: { kind: 'transaction', source: ctx.source, external_id: refundExternalId(refund.id) },
        data,
      },
    ],
  };
}

function shippingRefund(refund: ShopifyRefund): { amount: Amount; tax: Amount } {
  const adjustments = refund.order_adjustments.filter((a) => a.kind === 'shipping_refund');
  // Shipping refund adjustments are negative ("-3.95") and a reversal is positive ("3.95"): what
  // was given back is minus their signed sum. Taking each one's absolute value counted a refund
  // that was reversed and made again (-3.95, +3.95, -3.95) three times.
  const givenBack = (amounts: Amount[]) => new Money(0).minus(sum(amounts)); // never "-0"
  const adjustmentTax = givenBack(adjustments.map((a) => a.tax_amount_set?.shop_money.amount ?? a.tax_amount ?? new Money(0)));
  const lines = refund.refund_shipping_lines;
  if (lines.length > 0) {
    const taxes = lines.flatMap((l) => (l.total_tax_set ? [l.total_tax_set.shop_money.amount] : []));
    return {
      amount: sum(lines.map((l) => l.subtotal_amount_set.shop_money.amount)),
      tax: taxes.length > 0 ? sum(taxes) : adjustmentTax,
    };
  }
  return { amount: givenBack(adjustments.map((a) => a.amount_set?.shop_money.amount ?? a.amount)), tax: adjustmentTax };
}

/**
 * A refunded line: the original unit price and quantity, with the difference to the refunded
 * subtotal as its discount (the line's discounts, pro rata); exact units of the subtotal when
 * the original price is missing.
 */
function refundLine(item: ShopifyRefundLineItem): Line {
  const original = item.line_item;
  const gross = original?.price ? original.price.times(item.quantity) : undefined;
  const priced =
    original?.price && gross && gross.greaterThanOrEqualTo(item.subtotal)
      ? { unit_price: original.price, quantity: item.quantity, discount: nonZero(gross.minus(item.subtotal)) }
      : exactUnits(item.subtotal, item.quantity);
  const rates = original?.tax_lines ?? [];
  return compact<Line>({
    id: item.line_item_id ?? original?.id ?? undefined,
    product_id: original?.product_id ?? undefined,
    sku: nonBlank(original?.sku),
    name: nonBlank(original?.name) ?? nonBlank(original?.title),
    ...priced,
    tax_amount: item.total_tax,
    tax_rate: rates.length === 1 ? (rates[0]?.rate ?? undefined) : undefined,
    taxable: original ? notTaxable(original) : undefined,
  });
}
