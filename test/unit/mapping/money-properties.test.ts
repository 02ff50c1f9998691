import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import type { TransactionRequest } from '../../../src/api/schemas/tax-engine.js';
import { mapShopifyOrder, mapShopifyRefund } from '../../../src/connectors/shopify/map.js';
import { ShopifyOrder, ShopifyRefund } from '../../../src/connectors/shopify/schemas.js';
import { STRIPE_THREE_DECIMAL, STRIPE_TWO_DECIMAL_SPECIAL_CASES, STRIPE_ZERO_DECIMAL, stripeExponent } from '../../../src/connectors/stripe/currencies.js';
import { mapCreditNoteEvent, mapInvoiceEvent } from '../../../src/connectors/stripe/map.js';
import { StripeCreditNoteEvent, StripeInvoiceEvent } from '../../../src/connectors/stripe/schemas.js';
import { unitAndQuantity } from '../../../src/connectors/stripe/values.js';
import { mapWooOrder } from '../../../src/connectors/woocommerce/map.js';
import { WooOrder } from '../../../src/connectors/woocommerce/schemas.js';
import { InvoiceData, RefundData, type CanonicalEventInput } from '../../../src/domain/events.js';
import { mapInvoice, mapRefund } from '../../../src/mapping/index.js';
import { MappingSettings } from '../../../src/mapping/settings.js';
import { invoiceData, key, refundData } from './helpers.js';

/**
 * Properties of the amounts taxsync sends, over many generated inputs (fast-check). Every expected
 * amount is worked out here in integer minor units, the way the platform does, never by the code
 * under test; the mapped bodies are read back as decimals and compared.
 */

const SETTINGS = MappingSettings.parse({});
const ORIGINAL = '6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const PERCENTAGE = 'refund_info.refund_linked_percentage';
const RUNS = { numRuns: 300 };

/** n minor units as a decimal string with exactly `exp` decimals (1234, 2 → "12.34"; −5, 3 → "-0.005"). */
function minor(n: number, exp: number): string {
  const digits = Math.abs(n).toString().padStart(exp + 1, '0');
  const whole = digits.slice(0, digits.length - exp);
  return `${n < 0 ? '-' : ''}${whole}${exp > 0 ? `.${digits.slice(digits.length - exp)}` : ''}`;
}

/** n split into `weights.length` parts ≥ 1 (n ≥ parts), in proportion to the weights. */
function split(n: number, weights: readonly number[]): number[] {
  const count = Math.min(weights.length, n);
  const w = weights.slice(0, count);
  const total = w.reduce((a, b) => a + b, 0);
  const parts = w.map((x) => 1 + Math.floor(((n - count) * x) / total));
  parts[parts.length - 1]! += n - parts.reduce((a, b) => a + b, 0);
  return parts;
}

/** Σ over the items of unit_price × quantity − discount, plus the shipping fee: the amount a body asks tax on. */
function bodyAmount(body: TransactionRequest): Decimal {
  let total = new Decimal(0);
  for (const item of body.items ?? []) {
    total = total.plus(new Decimal(item.unit_price).times(item.quantity ?? '1')).minus(item.discount ?? '0');
  }
  const fee = body.shipping_fee;
  return fee ? total.plus(fee.amount) : total;
}

const wire = <T>(data: unknown, schema: { parse: (v: unknown) => T }): T => schema.parse(JSON.parse(JSON.stringify(data)));

function eventsOf(result: { kind: string; events?: CanonicalEventInput[] }): CanonicalEventInput[] {
  if (result.kind !== 'events' || result.events === undefined) throw new Error(`expected events, got ${JSON.stringify(result)}`);
  return result.events;
}

describe('refund fractions never add up past 1', () => {
  const currencies = fc.constantFrom(['JPY', 0] as const, ['USD', 2] as const, ['KWD', 3] as const);
  const line = fc.record({ unit: fc.integer({ min: 0, max: 500_000 }), quantity: fc.integer({ min: 1, max: 5 }), off: fc.integer({ min: 0, max: 100 }) });

  it('accepts every refund of an invoice given back in parts, together at most 1 and short of it by at most 10⁻¹⁰ a part; one minor unit more is refused', () => {
    fc.assert(
      fc.property(
        currencies,
        fc.array(line, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 30 }),
        ([currency, exp], lines, shipping, weights, inclusive, taxPercent) => {
          // Line l: unit × quantity, less `off` % of it as its discount (whole minor units).
          const amounts = lines.map((l) => l.unit * l.quantity);
          const discounts = lines.map((l, i) => Math.floor((amounts[i]! * l.off) / 100));
          const gross = amounts.reduce((a, b) => a + b, 0) - discounts.reduce((a, b) => a + b, 0) + shipping;
          // Prices including tax carry `taxPercent` % of the gross as tax; net = gross − tax.
          const tax = inclusive ? Math.floor((gross * taxPercent) / 100) : 0;
          const net = gross - tax;
          fc.pre(net >= 1);
          const invoice = invoiceData({
            currency,
            tax_inclusive: inclusive,
            lines: lines.map((l, i) => ({
              unit_price: minor(l.unit, exp),
              quantity: String(l.quantity),
              ...(discounts[i] === 0 ? {} : { discount: minor(discounts[i]!, exp) }),
            })),
            ...(shipping === 0 ? {} : { shipping: { amount: minor(shipping, exp) } }),
            ...(inclusive ? { tax_total: minor(tax, exp) } : {}),
          });
          const parts = split(net, weights);
          let taken = new Decimal(0);
          parts.forEach((part, i) => {
            const result = mapRefund(refundData({ invoice_external_id: 'INV-1', currency, amount: minor(part, exp) }), {
              key: key('transaction', `refund-${i}`),
              settings: SETTINGS,
              original: { id: ORIGINAL, invoice },
              alreadyRefunded: taken,
            });
            if (result.kind !== 'send') throw new Error(`refund ${i} of ${parts.length} not sent: ${JSON.stringify(result)}`);
            taken = taken.plus(result.fraction);
          });
          expect(taken.lessThanOrEqualTo(1)).toBe(true);
          expect(new Decimal(1).minus(taken).lessThanOrEqualTo(new Decimal(parts.length).times('1e-10'))).toBe(true);
          const more = mapRefund(refundData({ invoice_external_id: 'INV-1', currency, amount: minor(1, exp) }), {
            key: key('transaction', 'refund-more'),
            settings: SETTINGS,
            original: { id: ORIGINAL, invoice },
            alreadyRefunded: taken,
          });
          // One minor unit of a net of at most ~10⁷ units is more than 10⁻¹⁰ of it: refused.
          expect(more.kind === 'invalid' && Object.keys(more.fields)).toEqual([PERCENTAGE]);
        },
      ),
      RUNS,
    );
  });
});

describe('WooCommerce refunds', () => {
  const item = fc.record({ unit: fc.integer({ min: 1, max: 20_000 }), quantity: fc.integer({ min: 1, max: 3 }), off: fc.integer({ min: 0, max: 100 }) });

  it('never take more than the whole order together, and all refunds of the whole order take exactly 1 of it', () => {
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(0, 5, 7.5, 10, 19, 20, 25),
        fc.integer({ min: 0, max: 2000 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (items, ratePercent, shipping, weights, inclusive) => {
          // WooCommerce's amounts in cents: a line's total after its coupon share, its tax rounded per line.
          const taxOf = (cents: number) => Number(new Decimal(cents).times(ratePercent).dividedBy(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP));
          const lines = items.map((it, i) => {
            const subtotal = it.unit * it.quantity;
            const total = Math.floor((subtotal * (100 - it.off)) / 100);
            return { id: 100 + i, name: `Item ${i}`, quantity: it.quantity, subtotal, subtotal_tax: taxOf(subtotal), total, total_tax: taxOf(total) };
          });
          const shippingTax = taxOf(shipping);
          const tax = lines.reduce((a, l) => a + l.total_tax, 0) + shippingTax;
          const total = lines.reduce((a, l) => a + l.total + l.total_tax, 0) + shipping + shippingTax;
          fc.pre(total - tax >= 1);
          // The refunds give back the whole order; WooCommerce lists them newest (highest id) first.
          const parts = split(total, weights);
          const refunds = parts.map((p, i) => ({ id: 900 + i, reason: '', total: `-${minor(p, 2)}` })).reverse();
          const order = WooOrder.parse({
            id: 727,
            status: 'refunded',
            currency: 'USD',
            prices_include_tax: inclusive,
            date_created_gmt: '2026-11-20T10:00:00',
            date_modified_gmt: '2026-11-22T10:00:00',
            customer_id: 0,
            total: minor(total, 2),
            total_tax: minor(tax, 2),
            line_items: lines.map((l) => ({
              ...l,
              subtotal: minor(l.subtotal, 2),
              subtotal_tax: minor(l.subtotal_tax, 2),
              total: minor(l.total, 2),
              total_tax: minor(l.total_tax, 2),
            })),
            shipping_lines: shipping === 0 ? [] : [{ id: 200, method_title: 'Flat rate', total: minor(shipping, 2), total_tax: minor(shippingTax, 2) }],
            refunds,
          });
          const [invoiceEvent, ...refundEvents] = eventsOf(mapWooOrder(order, { source: 'woocommerce', topic: 'order.updated' }));
          const invoice = wire(invoiceEvent!.data, InvoiceData);
          let taken = new Decimal(0);
          let given = new Decimal(0);
          // Sent in the order they were made (oldest first), each knowing the shares of the earlier ones.
          for (const event of [...refundEvents].reverse()) {
            const refund = wire(event.data, RefundData);
            // Each refund's net and tax add up to what it gave back, to the cent.
            expect(refund.amount.plus(refund.tax_amount ?? 0).decimalPlaces()).toBeLessThanOrEqual(2);
            given = given.plus(refund.amount).plus(refund.tax_amount ?? 0);
            const result = mapRefund(refund, { key: event.record, settings: SETTINGS, original: { id: ORIGINAL, invoice }, alreadyRefunded: taken });
            if (result.kind !== 'send') throw new Error(`refund ${event.record.external_id} not sent: ${JSON.stringify(result)}`);
            taken = taken.plus(result.fraction);
          }
          // A refund whose net share is 0 (a cent the rounded running total does not move) is not sent.
          expect(given.lessThanOrEqualTo(new Decimal(total).dividedBy(100))).toBe(true);
          expect(taken.lessThanOrEqualTo(1)).toBe(true);
          expect(new Decimal(1).minus(taken).lessThanOrEqualTo(new Decimal(parts.length).times('1e-10'))).toBe(true);
        },
      ),
      RUNS,
    );
  });
});

describe('WooCommerce shops showing whole units (price decimals 0)', () => {
  // WooCommerce formats each amount of the REST payload on its own to the shop's "Number of
  // decimals" (class-wc-rest-orders-v2-controller.php: subtotal, subtotal_tax, total, total_tax
  // with `dp`; the order total likewise), so with 0 decimals the lines need not add up to the total.
  const item = fc.record({ unit: fc.integer({ min: 1, max: 500 }), quantity: fc.integer({ min: 1, max: 3 }), off: fc.constantFrom(0, 5, 10, 15, 20, 25) });
  const whole = (cents: number) => String(Number(new Decimal(cents).dividedBy(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP)));

  it('refunds of the whole order take exactly 1 of the invoice as sent, never more', () => {
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 4 }), fc.constantFrom(0, 12, 25), fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 4 }), (items, ratePercent, weights) => {
        // Internal amounts in öre (cents): whole-krona prices, a percentage coupon, tax per line.
        const lines = items.map((it, i) => {
          const subtotal = it.unit * 100 * it.quantity;
          const total = Math.floor((subtotal * (100 - it.off)) / 100);
          const tax = Math.floor((total * ratePercent) / 100);
          return { id: 100 + i, name: `Item ${i}`, quantity: it.quantity, subtotal, subtotal_tax: Math.floor((subtotal * ratePercent) / 100), total, total_tax: tax };
        });
        const tax = lines.reduce((a, l) => a + l.total_tax, 0);
        const total = lines.reduce((a, l) => a + l.total + l.total_tax, 0);
        const totalShown = Number(whole(total));
        fc.pre(totalShown - Number(whole(tax)) >= 1);
        // The shop refunds what the order says it was paid, in parts of whole kronor.
        const parts = split(totalShown, weights);
        const order = WooOrder.parse({
          id: 8140,
          status: 'refunded',
          currency: 'SEK',
          prices_include_tax: false,
          date_created_gmt: '2026-11-20T10:00:00',
          date_modified_gmt: '2026-11-22T10:00:00',
          customer_id: 0,
          total: whole(total),
          total_tax: whole(tax),
          line_items: lines.map((l) => ({ ...l, subtotal: whole(l.subtotal), subtotal_tax: whole(l.subtotal_tax), total: whole(l.total), total_tax: whole(l.total_tax) })),
          refunds: parts.map((p, i) => ({ id: 900 + i, reason: '', total: `-${p}` })).reverse(),
        });
        const [invoiceEvent, ...refundEvents] = eventsOf(mapWooOrder(order, { source: 'woocommerce', topic: 'order.updated' }));
        const invoice = wire(invoiceEvent!.data, InvoiceData);
        let taken = new Decimal(0);
        for (const event of [...refundEvents].reverse()) {
          const result = mapRefund(wire(event.data, RefundData), { key: event.record, settings: SETTINGS, original: { id: ORIGINAL, invoice }, alreadyRefunded: taken });
          if (result.kind !== 'send') throw new Error(`refund ${event.record.external_id} not sent: ${JSON.stringify(result)}`);
          taken = taken.plus(result.fraction);
        }
        expect(taken.lessThanOrEqualTo(1)).toBe(true);
        expect(new Decimal(1).minus(taken).lessThanOrEqualTo(new Decimal(parts.length).times('1e-10'))).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('WooCommerce orders', () => {
  const item = fc.record({ unit: fc.integer({ min: 0, max: 20_000 }), quantity: fc.integer({ min: 1, max: 4 }), off: fc.integer({ min: 0, max: 100 }) });
  // A fee: a surcharge or a negative fee (a credit), taxable or not.
  const fee = fc.record({ total: fc.integer({ min: -3000, max: 3000 }), taxable: fc.boolean() });

  it('line items after their coupon share, fees and shipping add up to the order total less its tax (or the total, when prices include tax)', () => {
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 4 }),
        fc.array(fee, { maxLength: 2 }),
        fc.constantFrom(0, 5, 7.5, 10, 19, 20, 25),
        fc.integer({ min: 0, max: 2000 }),
        fc.boolean(),
        (items, fees, ratePercent, shipping, inclusive) => {
          const taxOf = (cents: number) => Number(new Decimal(cents).times(ratePercent).dividedBy(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP));
          const lines = items.map((it, i) => {
            const subtotal = it.unit * it.quantity;
            const total = Math.floor((subtotal * (100 - it.off)) / 100);
            return { id: 100 + i, name: `Item ${i}`, quantity: it.quantity, subtotal, subtotal_tax: taxOf(subtotal), total, total_tax: taxOf(total) };
          });
          const feeLines = fees.map((f, i) => ({ id: 300 + i, name: `Fee ${i}`, tax_status: f.taxable ? 'taxable' : 'none', total: f.total, total_tax: f.taxable ? taxOf(f.total) : 0 }));
          const shippingTax = taxOf(shipping);
          const tax = lines.reduce((a, l) => a + l.total_tax, 0) + feeLines.reduce((a, f) => a + f.total_tax, 0) + shippingTax;
          const total = lines.reduce((a, l) => a + l.total + l.total_tax, 0) + feeLines.reduce((a, f) => a + f.total + f.total_tax, 0) + shipping + shippingTax;
          // WooCommerce keeps an order's total at or above 0.
          fc.pre(total >= 0 && total - tax >= 0);
          const order = WooOrder.parse({
            id: 727,
            status: 'processing',
            currency: 'USD',
            prices_include_tax: inclusive,
            date_created_gmt: '2026-11-20T10:00:00',
            customer_id: 0,
            total: minor(total, 2),
            total_tax: minor(tax, 2),
            line_items: lines.map((l) => ({ ...l, subtotal: minor(l.subtotal, 2), subtotal_tax: minor(l.subtotal_tax, 2), total: minor(l.total, 2), total_tax: minor(l.total_tax, 2) })),
            fee_lines: feeLines.map((f) => ({ ...f, total: minor(f.total, 2), total_tax: minor(f.total_tax, 2) })),
            shipping_lines: shipping === 0 ? [] : [{ id: 200, method_title: 'Flat rate', total: minor(shipping, 2), total_tax: minor(shippingTax, 2) }],
          });
          const [event] = eventsOf(mapWooOrder(order, { source: 'woocommerce', topic: 'order.created' }));
          const result = mapInvoice(wire(event!.data, InvoiceData), { key: event!.record, settings: SETTINGS });
          if (result.kind !== 'send') throw new Error(`not sent: ${JSON.stringify(result)}`);
          expect(result.body.transaction_level_discount).toBeUndefined();
          expect(bodyAmount(result.body).equals(new Decimal(minor(inclusive ? total : total - tax, 2)))).toBe(true);
        },
      ),
      RUNS,
    );
  });
});

describe('Shopify amounts', () => {
  const currencies = fc.constantFrom(['JPY', 0] as const, ['USD', 2] as const, ['KWD', 3] as const);
  const item = fc.record({ price: fc.integer({ min: 0, max: 100_000 }), quantity: fc.integer({ min: 1, max: 5 }), off: fc.integer({ min: 0, max: 100 }) });
  const shippingLine = fc.record({ price: fc.integer({ min: 0, max: 5000 }), off: fc.integer({ min: 0, max: 100 }) });

  const order = (currency: string, exp: number, items: { price: number; quantity: number; allocation: number }[], shipping: { price: number; allocation: number }[], taxesIncluded: boolean) =>
    ShopifyOrder.parse({
      id: 450789469,
      name: '#1001',
      created_at: '2026-11-20T09:00:00-05:00',
      updated_at: '2026-11-20T09:00:05-05:00',
      financial_status: 'paid',
      currency,
      taxes_included: taxesIncluded,
      line_items: items.map((it, i) => ({
        id: 1000 + i,
        name: `Item ${i}`,
        price: minor(it.price, exp),
        quantity: it.quantity,
        discount_allocations: it.allocation === 0 ? [] : [{ amount: minor(it.allocation, exp), discount_application_index: 0 }],
        tax_lines: [],
      })),
      shipping_lines: shipping.map((s, i) => ({
        id: 2000 + i,
        price: minor(s.price, exp),
        discount_allocations: s.allocation === 0 ? [] : [{ amount: minor(s.allocation, exp), discount_application_index: 1 }],
        tax_lines: [],
      })),
    });

  it('line items after their discount allocations plus shipping after its discounts add up to the order before tax, with no order discount on top', () => {
    fc.assert(
      fc.property(currencies, fc.array(item, { minLength: 1, maxLength: 5 }), fc.array(shippingLine, { maxLength: 2 }), fc.boolean(), ([currency, exp], items, shipping, taxesIncluded) => {
        // Shopify allocates every discount to the lines it touches: allocation ≤ price × quantity.
        const lines = items.map((it) => ({ ...it, allocation: Math.floor((it.price * it.quantity * it.off) / 100) }));
        const ships = shipping.map((s) => ({ ...s, allocation: Math.floor((s.price * s.off) / 100) }));
        const subtotal = lines.reduce((a, l) => a + l.price * l.quantity - l.allocation, 0); // subtotal_price
        const shippingNet = ships.reduce((a, s) => a + s.price - s.allocation, 0);
        const [event] = eventsOf(mapShopifyOrder(order(currency, exp, lines, ships, taxesIncluded), { source: 'shopify', topic: 'orders/paid' }));
        const result = mapInvoice(wire(event!.data, InvoiceData), { key: event!.record, settings: SETTINGS });
        if (result.kind !== 'send') throw new Error(`not sent: ${JSON.stringify(result)}`);
        expect(result.body.transaction_level_discount).toBeUndefined();
        expect(bodyAmount(result.body).equals(new Decimal(minor(subtotal + shippingNet, exp)))).toBe(true);
      }),
      RUNS,
    );
  });

  it("a refund's shipping is what its shipping_refund adjustments net to, however often they reverse each other, so cancelling the whole order takes exactly 1", () => {
    fc.assert(
      fc.property(
        currencies,
        fc.array(item, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.record({ weight: fc.integer({ min: 1, max: 100 }), reversals: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        ([currency, exp], items, shipping, pieces, taxesIncluded) => {
          const lines = items.map((it) => ({ ...it, allocation: Math.floor((it.price * it.quantity * it.off) / 100) }));
          const [orderEvent] = eventsOf(mapShopifyOrder(order(currency, exp, lines, [{ price: shipping, allocation: 0 }], taxesIncluded), { source: 'shopify', topic: 'orders/paid' }));
          const invoice = wire(orderEvent!.data, InvoiceData);
          // The shipping is refunded in parts; each part may be reversed (+part) and made again (−part).
          const parts = split(shipping, pieces.map((p) => p.weight));
          const adjustments = parts.flatMap((part, i) => {
            const made = { kind: 'shipping_refund', amount: minor(-part, exp), tax_amount: minor(0, exp) };
            const reversed = { kind: 'shipping_refund', amount: minor(part, exp), tax_amount: minor(0, exp) };
            return [made, ...Array.from({ length: pieces[i]!.reversals }, () => [reversed, made]).flat()];
          });
          const refund = ShopifyRefund.parse({
            id: 929361467,
            order_id: 450789469,
            created_at: '2026-11-21T09:00:00-05:00',
            refund_line_items: lines.map((l, i) => ({
              line_item_id: 1000 + i,
              quantity: l.quantity,
              // Shopify sends both: a JSON number and the *_set strings (read first).
              subtotal: Number(minor(l.price * l.quantity - l.allocation, exp)),
              subtotal_set: { shop_money: { amount: minor(l.price * l.quantity - l.allocation, exp), currency_code: currency } },
              total_tax: 0,
              total_tax_set: { shop_money: { amount: minor(0, exp), currency_code: currency } },
              line_item: { id: 1000 + i, name: `Item ${i}`, price: minor(l.price, exp) },
            })),
            order_adjustments: adjustments,
            transactions: [{ currency }],
          });
          const subtotals = lines.reduce((a, l) => a + l.price * l.quantity - l.allocation, 0);
          const [refundEvent] = eventsOf(mapShopifyRefund(refund, { source: 'shopify', topic: 'refunds/create' }));
          const data = wire(refundEvent!.data, RefundData);
          expect(data.shipping_amount?.toFixed()).toBe(new Decimal(minor(shipping, exp)).toFixed());
          expect(data.amount.equals(new Decimal(minor(subtotals + shipping, exp)))).toBe(true);
          const result = mapRefund(data, { key: refundEvent!.record, settings: SETTINGS, original: { id: ORIGINAL, invoice }, alreadyRefunded: new Decimal(0) });
          if (result.kind !== 'send') throw new Error(`not sent: ${JSON.stringify(result)}`);
          expect(result.fraction.toFixed()).toBe('1');
        },
      ),
      RUNS,
    );
  });
});

describe('Stripe amounts in each currency’s own exponent', () => {
  const currency = fc.constantFrom(...STRIPE_ZERO_DECIMAL, ...STRIPE_THREE_DECIMAL, ...STRIPE_TWO_DECIMAL_SPECIAL_CASES, 'USD', 'EUR', 'GBP');
  // A price's unit amount: none, whole minor units, or a *_decimal with up to 12 decimals of a minor unit.
  const unit = fc.option(
    fc.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 12 })).map(([n, places]) => minor(n, places)),
    { nil: undefined },
  );

  it('sends each line so that unit_price × quantity is its amount exactly: amount ÷ 10^exponent', () => {
    fc.assert(
      fc.property(
        currency,
        fc.integer({ min: -100_000_000, max: 100_000_000 }),
        fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
        unit,
        (code, amount, quantity, unitAmount) => {
          const exp = stripeExponent(code);
          const line = unitAndQuantity(amount, unitAmount, quantity === undefined ? undefined : String(quantity), code);
          expect(line.unit_price.times(line.quantity).equals(new Decimal(minor(amount, exp)))).toBe(true);
          expect(line.quantity.greaterThan(0)).toBe(true);
        },
      ),
      RUNS,
    );
  });
  const stripeLine = fc.record({ amount: fc.integer({ min: 0, max: 1_000_000 }), off: fc.integer({ min: 0, max: 100 }), taxPercent: fc.integer({ min: 0, max: 25 }) });

  it('a credit note of the whole invoice, shipping and taxes included (inclusive or exclusive), takes exactly 1 of it', () => {
    fc.assert(
      fc.property(
        currency,
        fc.array(stripeLine, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 50_000 }),
        fc.integer({ min: 0, max: 25 }),
        fc.boolean(),
        (code, rawLines, rawShipping, shippingTaxPercent, inclusive) => {
          // ISK and UGX are two-decimal in Stripe's API but whole units in fact: Stripe refuses amounts
          // not divisible by 100 (docs/connectors-stripe-erp.md, "Amounts"), and the engine rounds to ISO's 0 decimals.
          const whole = code === 'ISK' || code === 'UGX' ? 100 : 1;
          const lines = rawLines.map((l) => ({ ...l, amount: l.amount * whole }));
          const shipping = rawShipping * whole;
          const behavior = inclusive ? 'inclusive' : 'exclusive';
          // Minor units, as Stripe computes them: a line's discount and tax are whole units; inclusive tax is inside the amount.
          const rows = lines.map((l) => {
            const discount = Math.floor((l.amount * l.off) / 100 / whole) * whole;
            const base = l.amount - discount;
            const tax = inclusive ? Math.floor((base * l.taxPercent) / (100 + l.taxPercent)) : Math.floor((base * l.taxPercent) / 100);
            return { amount: l.amount, discount, base, tax };
          });
          const shippingTax = inclusive ? Math.floor((shipping * shippingTaxPercent) / (100 + shippingTaxPercent)) : Math.floor((shipping * shippingTaxPercent) / 100);
          const taxes = rows.reduce((a, r) => a + r.tax, 0) + shippingTax;
          const gross = rows.reduce((a, r) => a + r.base, 0) + shipping; // what the prices say, after discounts
          const total = inclusive ? gross : gross + taxes;
          fc.pre(total - taxes >= 1);
          const shippingCost = { amount_subtotal: shipping, amount_tax: shippingTax, amount_total: inclusive ? shipping : shipping + shippingTax };
          const lineOf = (r: (typeof rows)[number], i: number) => ({
            id: `il_${i}`,
            amount: r.amount,
            quantity: 1,
            discount_amounts: r.discount === 0 ? [] : [{ amount: r.discount, discount: 'di_1' }],
            taxes: [{ amount: r.tax, tax_behavior: behavior, taxable_amount: r.base - (inclusive ? r.tax : 0) }],
          });
          const invoiceEvent = StripeInvoiceEvent.parse({
            id: 'evt_invoice',
            type: 'invoice.finalized',
            created: 1795168200,
            data: {
              object: {
                id: 'in_1',
                number: 'INV-1',
                status: 'open',
                currency: code.toLowerCase(),
                created: 1795168200,
                lines: { data: rows.map(lineOf), has_more: false },
                shipping_cost: shippingCost,
                total,
                total_excluding_tax: total - taxes,
                total_taxes: [{ amount: taxes, tax_behavior: behavior }],
              },
            },
          });
          const noteEvent = StripeCreditNoteEvent.parse({
            id: 'evt_note',
            type: 'credit_note.created',
            created: 1795168700,
            data: {
              object: {
                id: 'cn_1',
                number: 'INV-1-CN-01',
                status: 'issued',
                currency: code.toLowerCase(),
                created: 1795168700,
                invoice: 'in_1',
                lines: { data: rows.map((r, i) => ({ ...lineOf(r, i), id: `cnli_${i}`, type: 'invoice_line_item' })), has_more: false },
                shipping_cost: shippingCost,
                total,
                total_excluding_tax: total - taxes,
                total_taxes: [{ amount: taxes, tax_behavior: behavior }],
              },
            },
          });
          const [invoice] = eventsOf(mapInvoiceEvent(invoiceEvent, { source: 'stripe' }));
          const [note] = eventsOf(mapCreditNoteEvent(noteEvent, { source: 'stripe' }));
          const result = mapRefund(wire(note!.data, RefundData), {
            key: note!.record,
            settings: SETTINGS,
            original: { id: ORIGINAL, invoice: wire(invoice!.data, InvoiceData) },
            alreadyRefunded: new Decimal(0),
          });
          if (result.kind !== 'send') throw new Error(`not sent: ${JSON.stringify(result)}`);
          expect(result.fraction.toFixed()).toBe('1');
        },
      ),
      RUNS,
    );
  });
});
