import type {
  Address,
  CanonicalEventInput,
  CustomerData,
  InvoiceCustomer,
  InvoiceData,
  Line,
  RefundData,
} from '../../domain/events.js';
import { DECIMAL_PATTERN, Money, isoExponent, roundMoney, type Decimal } from '../../domain/money.js';
import { refundExternalId } from '../../domain/record-key.js';
import { compact, exactUnits, nonBlank, nonZero, sum, utcTimestamp, type MapResult } from '../shared/fields.js';
import type { WooAddress, WooCustomer, WooDeleted, WooFeeLine, WooItemTax, WooLineItem, WooOrder, WooRefund } from './schemas.js';

/**
 * WooCommerce payloads → canonical events. Pure: validated input plus settings in, events out
 * (docs/connectors-shopify-woocommerce.md has every rule with its reason).
 */

export const CONNECTOR_ID = 'woocommerce';

export interface WooMapContext {
  /** settings.source: the `source` of every record. */
  source: string;
  /** The X-WC-Webhook-Topic of the delivery. */
  topic: string;
}

export type WooMapResult = MapResult<CanonicalEventInput>;

type Amount = Decimal;

/** Statuses of orders that are not (or no longer) orders: nothing to tell the tax engine. */
const NOT_AN_ORDER = new Set(['checkout-draft', 'auto-draft', 'trash']);
/** Orders that never became a sale. */
const CANCELLED = new Set(['cancelled', 'failed']);
/**
 * Orders the customer paid. `refunded` is paid too: its refunds travel as linked refund events,
 * so cancelling the invoice as well would reverse the sale twice.
 */
const PAID = new Set(['processing', 'completed', 'refunded']);

/** When the record last changed: date_modified_gmt, or date_created_gmt for a record never modified. */
function changedAt(record: { date_created_gmt: string; date_modified_gmt?: string | null }): string {
  return utcTimestamp(record.date_modified_gmt ?? record.date_created_gmt);
}

/**
 * Dedupe key of a delivery. WooCommerce gives every delivery a new X-WC-Webhook-Delivery-ID, so
 * the key is the record and its modification time: the same state delivered twice is one
 * delivery. The resource prefix keeps order 7 and customer 7 apart. `at` is a UTC time, or
 * `deleted` for order.deleted (which carries no time).
 */
export function wooDeliveryId(resource: 'order' | 'customer', id: string, at: string): string {
  return `${resource}:${id}:${at}`;
}

/**
 * One id per change of a record (same scheme as Shopify's: resource, id, change time, and for
 * orders their status, so two statuses of the same second are two changes).
 */
export function wooEventId(resource: 'orders' | 'refunds' | 'customers', id: string, at: string, status?: string): string {
  return `${CONNECTOR_ID}:${resource}:${id}:${at}${status === undefined ? '' : `:${status}`}`;
}

/** The status is part of an order's delivery key: a status change of the same second is a new delivery. */
export function orderDeliveryId(order: WooOrder): string {
  return wooDeliveryId('order', order.id, `${changedAt(order)}:${order.status}`);
}

/**
 * The order of an order's statuses within one second (docs/connectors-shopify-woocommerce.md,
 * "Ordering"): pending, on-hold < processing, completed, refunded < cancelled, failed. Not final:
 * WooCommerce lets a shop set a cancelled order back to processing.
 */
const ORDER_PRECEDENCE: Readonly<Record<string, number>> = {
  pending: 10,
  'on-hold': 10,
  processing: 20,
  completed: 20,
  refunded: 20,
  cancelled: 30,
  failed: 30,
};

export function customerDeliveryId(customer: WooCustomer): string {
  return wooDeliveryId('customer', customer.id, changedAt(customer));
}

/**
 * order.created / order.updated → invoice.upserted, plus one refund.created per refund the order
 * lists (WooCommerce has no refund topic: refunds only show up inside their order).
 */
export function mapWooOrder(order: WooOrder, ctx: WooMapContext): WooMapResult {
  if (NOT_AN_ORDER.has(order.status)) {
    return { kind: 'ignore', reason: `order status ${order.status} is not a placed order` };
  }
  const at = changedAt(order);
  const customer = invoiceCustomer(order);
  const addresses = addressPair(order.billing, order.shipping);
  const invoiceFacts = invoiceData(order, customer, addresses, at);
  const invoice: CanonicalEventInput = {
    id: wooEventId('orders', order.id, at, order.status),
    type: 'invoice.upserted',
    occurred_at: at,
    precedence: ORDER_PRECEDENCE[order.status] ?? ORDER_PRECEDENCE.pending!,
    connector: CONNECTOR_ID,
    record: { kind: 'transaction', source: ctx.source, external_id: order.id },
    data: invoiceFacts,
  };
  const nets = refundNets(order, invoiceFacts);
  // A refund whose net share is 0 (a restock-only refund of 0.00, or a cent the running total
  // does not move) takes no share of the invoice: nothing for the tax engine, whose linked refunds
  // need a share above 0.
  const refunds = order.refunds.flatMap((refund, i): CanonicalEventInput[] =>
    nets[i]!.isZero()
      ? []
      : [
          {
            id: wooEventId('refunds', `${order.id}-${refund.id}`, at),
            type: 'refund.created',
            occurred_at: at,
            connector: CONNECTOR_ID,
            record: { kind: 'transaction', source: ctx.source, external_id: wooRefundExternalId(order.id, refund.id) },
            data: refundData(order, refund, nets[i]!, customer, addresses, at),
          },
        ],
  );
  return { kind: 'events', events: [invoice, ...refunds] };
}

/** Refund ids are unique in a store; the order id is kept in the external id for tracing. */
export function wooRefundExternalId(orderId: string, refundId: string): string {
  return refundExternalId(`${orderId}-${refundId}`);
}

/** order.deleted: WooCommerce sends `{id}` only, and no time; the time it arrived stands in. */
export function mapWooOrderDeleted(deleted: WooDeleted, ctx: WooMapContext & { receivedAt: string }): WooMapResult {
  return {
    kind: 'events',
    events: [
      {
        id: wooEventId('orders', deleted.id, 'deleted'),
        type: 'invoice.deleted',
        occurred_at: utcTimestamp(ctx.receivedAt),
        connector: CONNECTOR_ID,
        record: { kind: 'transaction', source: ctx.source, external_id: deleted.id },
        data: {},
      },
    ],
  };
}

export function mapWooCustomer(customer: WooCustomer, ctx: WooMapContext): WooMapResult {
  const at = changedAt(customer);
  const name = fullName(customer.first_name, customer.last_name);
  const data = compact<CustomerData>({
    name,
    email: nonBlank(customer.email),
    addresses: addressPair(customer.billing, customer.shipping),
    created_at: utcTimestamp(customer.date_created_gmt),
    updated_at: at,
  });
  return {
    kind: 'events',
    events: [
      {
        id: wooEventId('customers', customer.id, at),
        type: 'customer.upserted',
        occurred_at: at,
        connector: CONNECTOR_ID,
        record: { kind: 'customer', source: ctx.source, external_id: customer.id },
        data,
      },
    ],
  };
}

function invoiceData(
  order: WooOrder,
  customer: InvoiceCustomer | undefined,
  addresses: InvoiceData['addresses'],
  at: string,
): InvoiceData {
  const inclusive = order.prices_include_tax;
  const rates = ratesById(order);
  const status: InvoiceData['status'] = CANCELLED.has(order.status)
    ? 'cancelled'
    : order.date_paid_gmt || PAID.has(order.status)
      ? 'paid'
      : 'active';
  return compact<InvoiceData>({
    number: order.number ?? undefined,
    issued_at: utcTimestamp(order.date_created_gmt),
    status,
    currency: order.currency,
    tax_inclusive: inclusive,
    customer,
    addresses,
    lines: [
      ...order.line_items.map((item) => itemLine(item, inclusive, rates)),
      // Fees (surcharges, or negative fees used as discounts) are lines of one unit.
      ...order.fee_lines.map((fee) => feeLine(fee, inclusive, rates)),
    ],
    shipping: shippingData(order),
    // WooCommerce has no order subtotal; its discount_total is the sum of the line discounts
    // already on the lines (coupons are spread over the items), so no order discount is sent.
    tax_total: order.total_tax,
    total: order.total,
    created_at: utcTimestamp(order.date_created_gmt),
    updated_at: at,
  });
}

/**
 * A product line. In a tax-inclusive document every amount includes tax, so a line's gross
 * amounts are subtotal + subtotal_tax (before discounts) and total + total_tax (after); otherwise
 * subtotal and total. Unit price = before-discount amount ÷ quantity (exact, see exactUnits);
 * discount = before − after.
 */
function itemLine(item: WooLineItem, inclusive: boolean, rates: ReadonlyMap<string, Amount>): Line {
  const before = inclusive ? item.subtotal.plus(item.subtotal_tax) : item.subtotal;
  const after = inclusive ? item.total.plus(item.total_tax) : item.total;
  return compact<Line>({
    id: item.id,
    product_id: item.product_id && item.product_id !== '0' ? item.product_id : undefined,
    sku: nonBlank(item.sku),
    name: nonBlank(item.name),
    ...exactUnits(before, item.quantity),
    discount: nonZero(before.minus(after)),
    tax_amount: item.total_tax,
    tax_rate: singleRate(item.taxes, rates),
  });
}

function feeLine(fee: WooFeeLine, inclusive: boolean, rates: ReadonlyMap<string, Amount>): Line {
  return compact<Line>({
    id: fee.id,
    name: nonBlank(fee.name),
    unit_price: inclusive ? fee.total.plus(fee.total_tax) : fee.total,
    quantity: new Money(1),
    tax_amount: fee.total_tax,
    tax_rate: singleRate(fee.taxes, rates),
    // A fee with tax_status none is not taxed by the shop; the engine must not tax it either.
    taxable: fee.tax_status === 'none' ? false : undefined,
  });
}

function shippingData(order: WooOrder): InvoiceData['shipping'] {
  if (order.shipping_lines.length === 0) return undefined;
  const inclusive = order.prices_include_tax;
  return {
    // WooCommerce shipping totals are already net of any shipping discount.
    amount: sum(order.shipping_lines.map((l) => (inclusive ? l.total.plus(l.total_tax) : l.total))),
    tax_amount: sum(order.shipping_lines.map((l) => l.total_tax)),
  };
}

/** Rate percentages of the order's tax lines, as fractions, by rate id. */
function ratesById(order: WooOrder): Map<string, Amount> {
  const rates = new Map<string, Amount>();
  for (const line of order.tax_lines) if (line.rate_percent) rates.set(line.rate_id, line.rate_percent.dividedBy(100));
  return rates;
}

/** The rate of an item taxed by exactly one rate whose percentage the order states. */
function singleRate(taxes: readonly WooItemTax[], rates: ReadonlyMap<string, Amount>): Amount | undefined {
  const applied = taxes.filter((t) => {
    const total = typeof t.total === 'number' ? String(t.total) : (t.total ?? '');
    return DECIMAL_PATTERN.test(total) && !new Money(total).isZero();
  });
  return applied.length === 1 && applied[0] ? rates.get(applied[0].id) : undefined;
}

/**
 * The net (without tax) of each refund the order lists, in the order listed. The order gives each
 * refund only as its gross amount (tax included) and never says how much of it was tax, so the
 * refunds are taken to carry the order's own tax proportion
 *   r = net of the invoice as sent ÷ order total
 * and each refund's net is its share of the running total, in the order the refunds were made
 * (ascending id; WooCommerce lists them newest first):
 *   net(refund k) = round(r × Σ gross of refunds 1..k, d) − round(r × Σ gross of refunds 1..k−1, d)
 * so the nets of all refunds add up to round(r × all they gave back): never more than the invoice,
 * and exactly it once the whole order is refunded. Rounding each refund on its own could add up past
 * the order (7.175 → 7.18 and 21.525 → 21.53 of a 28.70 order), so the last refund of a fully
 * refunded order was refused. A refund's net never changes when later refunds are added.
 *
 * The invoice's net is measured as the tax engine and the refund's fraction measure it (each line
 * rounded to the currency's minor unit, less its discount, plus shipping; less the order's tax when
 * prices include it: invoiceAmount and refundBasis in src/mapping/refund-fraction.ts), not as
 * total − total_tax: WooCommerce rounds every amount of the payload on its own to the shop's
 * "Number of decimals", so with 0 decimals (common for SEK, NOK, HUF shops) the lines add up to
 * more or less than the total, and a full refund would take more or less than 1. For an order whose
 * lines add up to its total (2 decimals) the two are the same.
 *
 * d = the larger of the currency's ISO decimals and the decimals the payload uses. Exact for a
 * full refund and for refunds with the order's tax mix; an approximation for a refund of, say,
 * only an untaxed item. A net can be 0 (a refund of 0.00, or of a cent that does not move the
 * rounded running total); such a refund is not sent.
 */
function refundNets(order: WooOrder, invoice: InvoiceData): Amount[] {
  const decimals = Math.max(
    isoExponent(order.currency),
    order.total.decimalPlaces(),
    ...order.refunds.map((r) => r.total.decimalPlaces()),
  );
  const scale = isoExponent(order.currency);
  let net = new Money(0);
  for (const line of invoice.lines) net = net.plus(roundMoney(line.unit_price.times(line.quantity), scale)).minus(line.discount ?? 0);
  if (invoice.shipping) net = net.plus(invoice.shipping.amount).minus(invoice.shipping.discount ?? 0);
  if (invoice.tax_inclusive) net = net.minus(order.total_tax);
  const netOf = (gross: Amount): Amount => (order.total.isZero() ? gross : roundMoney(gross.times(net).dividedBy(order.total), decimals));
  const made = order.refunds.map((refund, i) => ({ refund, i })).sort((a, b) => compareIds(a.refund.id, b.refund.id));
  const nets: Amount[] = [];
  let given = new Money(0);
  let netSoFar = new Money(0);
  for (const { refund, i } of made) {
    given = given.plus(refund.total.abs());
    const cumulative = netOf(given);
    nets[i] = cumulative.minus(netSoFar);
    netSoFar = cumulative;
  }
  return nets;
}

/** WooCommerce ids are increasing integers (post ids): numeric order, else text order. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A refund: its net from refundNets, tax_amount = gross − net. Neither the refund's date nor its
 * lines or shipping part are in the payload: issued_at is the order's modification time in this
 * delivery.
 */
function refundData(
  order: WooOrder,
  refund: WooRefund,
  amount: Amount,
  customer: InvoiceCustomer | undefined,
  addresses: RefundData['addresses'],
  at: string,
): RefundData {
  return compact<RefundData>({
    invoice_external_id: order.id,
    issued_at: at,
    currency: order.currency,
    amount,
    tax_amount: refund.total.abs().minus(amount),
    reason: nonBlank(refund.reason) ?? nonBlank(refund.refund),
    customer,
    addresses,
  });
}

/**
 * The order's customer: a registered customer by id; a guest (customer_id 0) as
 * `guest-order-<order id>`. Guests are not keyed by email: a record key travels into Redis keys,
 * logs and dead-letter entries, and an email there is personal data. No customer when a guest
 * left neither a name nor an email.
 */
function invoiceCustomer(order: WooOrder): InvoiceCustomer | undefined {
  const email = nonBlank(order.billing?.email);
  const name = fullName(order.billing?.first_name, order.billing?.last_name);
  const guest = order.customer_id === '0';
  if (guest && email === undefined && name === undefined) return undefined;
  const externalId = guest ? `guest-order-${order.id}` : order.customer_id;
  return compact<InvoiceCustomer>({
    external_id: externalId,
    name,
    email,
    addresses: addressPair(order.billing, order.shipping),
  });
}

function fullName(first: string | null | undefined, last: string | null | undefined): string | undefined {
  const name = [nonBlank(first), nonBlank(last)].filter((s) => s !== undefined).join(' ');
  return name === '' ? undefined : name;
}

function address(a: WooAddress | null | undefined): Address | undefined {
  if (!a) return undefined;
  const street = [nonBlank(a.address_1), nonBlank(a.address_2)].filter((s) => s !== undefined).join(', ');
  const out = compact<Address>({
    street: street === '' ? undefined : street,
    city: nonBlank(a.city),
    state: nonBlank(a.state),
    zip: nonBlank(a.postcode),
    country: nonBlank(a.country)?.toUpperCase(),
  });
  return Object.keys(out).length === 0 ? undefined : out;
}

function addressPair(billing: WooAddress | null | undefined, shipping: WooAddress | null | undefined) {
  const out = compact({ billing: address(billing), shipping: address(shipping) });
  return Object.keys(out).length === 0 ? undefined : out;
}
