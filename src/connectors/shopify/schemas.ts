import { z } from 'zod';
import type { Decimal } from '../../domain/money.js';
import { OffsetDateTime, PlatformAmount, PlatformId, PlatformQuantity, PlatformRate } from '../shared/fields.js';

/**
 * Shopify webhook payloads (REST Admin API shapes), only the fields taxsync reads. Objects are
 * loose: Shopify adds fields with every API version. Money is a decimal string in Shopify
 * payloads ("19.99"); where Shopify sends a JSON number (refund line `subtotal`, `total_tax`) the
 * `*_set.shop_money.amount` string is read instead. Every amount is in the shop currency
 * (`currency`), never the presentment currency.
 */

const text = z.string().nullish();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish().transform((v) => v ?? []);

const MoneySet = z.looseObject({
  shop_money: z.looseObject({ amount: PlatformAmount, currency_code: z.string() }),
});

const TaxLine = z.looseObject({ price: PlatformAmount, rate: PlatformRate.nullish(), title: text });
export type ShopifyTaxLine = z.infer<typeof TaxLine>;

const DiscountAllocation = z.looseObject({ amount: PlatformAmount });

export const ShopifyAddress = z.looseObject({
  address1: text,
  address2: text,
  city: text,
  province_code: text,
  zip: text,
  country_code: text,
});
export type ShopifyAddress = z.infer<typeof ShopifyAddress>;

export const ShopifyCustomer = z.looseObject({
  id: PlatformId,
  email: text,
  first_name: text,
  last_name: text,
  state: text,
  tax_exempt: z.boolean().nullish(),
  tax_exemptions: list(z.string()),
  created_at: OffsetDateTime.nullish(),
  updated_at: OffsetDateTime.nullish(),
  default_address: ShopifyAddress.nullish(),
});
export type ShopifyCustomer = z.infer<typeof ShopifyCustomer>;

/** customers/create and customers/update. */
export const ShopifyCustomerPayload = ShopifyCustomer.extend({ updated_at: OffsetDateTime });
export type ShopifyCustomerPayload = z.infer<typeof ShopifyCustomerPayload>;

const LineItem = z.looseObject({
  id: PlatformId.nullish(),
  product_id: PlatformId.nullish(),
  sku: text,
  name: text,
  title: text,
  /** Per unit, before discounts; tax-inclusive when the order's taxes_included is. */
  price: PlatformAmount,
  quantity: PlatformQuantity,
  /** false for products the merchant does not charge tax on (donations, services exempt by law). */
  taxable: z.boolean().nullish(),
  /** A gift card sold: not a taxable supply (tax is due when the card is redeemed). */
  gift_card: z.boolean().nullish(),
  discount_allocations: list(DiscountAllocation),
  tax_lines: list(TaxLine),
});
export type ShopifyLineItem = z.infer<typeof LineItem>;

const ShippingLine = z.looseObject({
  price: PlatformAmount,
  is_removed: z.boolean().nullish(),
  discount_allocations: list(DiscountAllocation),
  tax_lines: list(TaxLine),
});

/** orders/create, orders/updated, orders/paid, orders/cancelled. */
export const ShopifyOrder = z
  .looseObject({
    id: PlatformId,
    name: text,
    created_at: OffsetDateTime.nullish(),
    processed_at: OffsetDateTime.nullish(),
    updated_at: OffsetDateTime,
    cancelled_at: OffsetDateTime.nullish(),
    financial_status: text,
    currency: z.string().regex(/^[A-Z]{3}$/, { error: 'must be an ISO 4217 code such as USD' }),
    taxes_included: z.boolean(),
    customer: ShopifyCustomer.nullish(),
    billing_address: ShopifyAddress.nullish(),
    shipping_address: ShopifyAddress.nullish(),
    line_items: z.array(LineItem),
    shipping_lines: list(ShippingLine),
    subtotal_price: PlatformAmount.nullish(),
    total_tax: PlatformAmount.nullish(),
    total_price: PlatformAmount.nullish(),
  })
  .superRefine((order, ctx) => {
    if (!order.created_at && !order.processed_at) {
      ctx.addIssue({ code: 'custom', path: ['created_at'], message: 'created_at or processed_at is required' });
    }
  });
export type ShopifyOrder = z.infer<typeof ShopifyOrder>;

/**
 * A money field Shopify sends twice: as `<name>_set` (strings) and as `<name>` (a JSON number in
 * refund payloads). The set wins; the plain field is read only under the PlatformAmount rule.
 */
function preferSet(
  set: z.infer<typeof MoneySet> | null | undefined,
  plain: unknown,
  field: string,
  ctx: z.RefinementCtx,
): { amount: Decimal; currency?: string } {
  if (set) return { amount: set.shop_money.amount, currency: set.shop_money.currency_code };
  const parsed = PlatformAmount.safeParse(plain);
  if (parsed.success) return { amount: parsed.data };
  ctx.addIssue({
    code: 'custom',
    path: [field],
    message:
      plain === undefined || plain === null
        ? `${field} or ${field}_set is required`
        : `${parsed.error.issues[0]?.message ?? 'is not an amount'} (and no ${field}_set was sent)`,
  });
  return { amount: PlatformAmount.parse('0') };
}

const RefundLineItem = z
  .looseObject({
    line_item_id: PlatformId.nullish(),
    quantity: PlatformQuantity,
    subtotal: z.unknown(),
    subtotal_set: MoneySet.nullish(),
    total_tax: z.unknown(),
    total_tax_set: MoneySet.nullish(),
    line_item: z
      .looseObject({
        id: PlatformId.nullish(),
        product_id: PlatformId.nullish(),
        sku: text,
        name: text,
        title: text,
        price: PlatformAmount.nullish(),
        taxable: z.boolean().nullish(),
        gift_card: z.boolean().nullish(),
        tax_lines: list(TaxLine),
      })
      .nullish(),
  })
  .transform((item, ctx) => {
    const subtotal = preferSet(item.subtotal_set, item.subtotal, 'subtotal', ctx);
    const tax = preferSet(item.total_tax_set, item.total_tax, 'total_tax', ctx);
    return {
      line_item_id: item.line_item_id,
      quantity: item.quantity,
      line_item: item.line_item,
      /** Refunded amount of the line after its discounts, without tax (tax-exclusive shops). */
      subtotal: subtotal.amount,
      total_tax: tax.amount,
      currency: subtotal.currency ?? tax.currency,
    };
  });
export type ShopifyRefundLineItem = z.infer<typeof RefundLineItem>;

/**
 * An order adjustment. Amounts are signed: a shipping refund is negative ("-3.95"), and Shopify
 * reverses one with a positive adjustment of the same kind ("3.95"). `amount_set.shop_money` is
 * the shop-currency amount; the plain `amount` is read only when no set is sent.
 */
const OrderAdjustment = z.looseObject({
  kind: text,
  amount: PlatformAmount,
  tax_amount: PlatformAmount.nullish(),
  amount_set: MoneySet.nullish(),
  tax_amount_set: MoneySet.nullish(),
});

const RefundShippingLine = z.looseObject({
  subtotal_amount_set: MoneySet,
  total_tax_set: MoneySet.nullish(),
});

/** refunds/create. */
export const ShopifyRefund = z
  .looseObject({
    id: PlatformId,
    order_id: PlatformId,
    created_at: OffsetDateTime.nullish(),
    processed_at: OffsetDateTime.nullish(),
    note: text,
    refund_line_items: list(RefundLineItem),
    order_adjustments: list(OrderAdjustment),
    refund_shipping_lines: list(RefundShippingLine),
    transactions: list(z.looseObject({ currency: text })),
  })
  .superRefine((refund, ctx) => {
    if (!refund.created_at && !refund.processed_at) {
      ctx.addIssue({ code: 'custom', path: ['created_at'], message: 'created_at or processed_at is required' });
    }
  })
  .transform((refund, ctx) => {
    // A refund names no currency of its own: take the shop currency of its amounts.
    const currency =
      refund.refund_line_items.find((l) => l.currency)?.currency ??
      refund.order_adjustments.find((a) => a.amount_set)?.amount_set?.shop_money.currency_code ??
      refund.refund_shipping_lines[0]?.subtotal_amount_set.shop_money.currency_code ??
      refund.transactions.find((t) => t.currency)?.currency ??
      undefined;
    if (!currency || !/^[A-Z]{3}$/.test(currency)) {
      ctx.addIssue({
        code: 'custom',
        path: ['transactions'],
        message: 'no currency: expected an ISO 4217 code in a *_set.shop_money.currency_code or in transactions[].currency',
      });
      return z.NEVER;
    }
    return { ...refund, currency };
  });
export type ShopifyRefund = z.infer<typeof ShopifyRefund>;
