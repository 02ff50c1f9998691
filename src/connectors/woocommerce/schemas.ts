import { z } from 'zod';
import { GmtDateTime, PlatformAmount, PlatformId, PlatformQuantity, PlatformRate } from '../shared/fields.js';

/**
 * WooCommerce webhook payloads: the REST API v3 representation of the resource (what the webhook
 * "API version" WP REST API Integration v3 sends), only the fields taxsync reads. Objects are
 * loose. Money is a decimal string ("19.99") in these payloads; quantities are JSON integers.
 * A line item's `price` (a JSON float, after discounts) is deliberately not read: unit prices
 * come from the exact `subtotal` strings.
 */

const text = z.string().nullish();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish().transform((v) => v ?? []);

export const WooAddress = z.looseObject({
  first_name: text,
  last_name: text,
  company: text,
  address_1: text,
  address_2: text,
  city: text,
  state: text,
  postcode: text,
  country: text,
  email: text,
});
export type WooAddress = z.infer<typeof WooAddress>;

/**
 * One tax rate's part of an item: `{id: <rate id>, total, subtotal}`. WooCommerce writes "" for
 * a rate that does not apply, so totals are kept as text and read by `appliedRateIds`.
 */
const ItemTax = z.looseObject({ id: PlatformId, total: z.union([z.string(), z.number()]).nullish() });
export type WooItemTax = z.infer<typeof ItemTax>;

const LineItem = z.looseObject({
  id: PlatformId,
  name: text,
  product_id: PlatformId.nullish(),
  sku: text,
  quantity: PlatformQuantity,
  /** Before discounts, without tax, for the whole quantity. */
  subtotal: PlatformAmount,
  subtotal_tax: PlatformAmount,
  /** After discounts, without tax. */
  total: PlatformAmount,
  total_tax: PlatformAmount,
  taxes: list(ItemTax),
});
export type WooLineItem = z.infer<typeof LineItem>;

const ShippingLine = z.looseObject({
  id: PlatformId,
  method_title: text,
  total: PlatformAmount,
  total_tax: PlatformAmount,
});

const FeeLine = z.looseObject({
  id: PlatformId,
  name: text,
  /** `taxable` or `none` (a fee the shop charges no tax on). */
  tax_status: text,
  total: PlatformAmount,
  total_tax: PlatformAmount,
  taxes: list(ItemTax),
});
export type WooFeeLine = z.infer<typeof FeeLine>;

const TaxLine = z.looseObject({
  rate_id: PlatformId,
  /** A percentage (20 means 20%); present since WooCommerce 5.7. */
  rate_percent: PlatformRate.nullish(),
});

/** A refund as the order lists it: its gross amount, negative ("-10.00"), and nothing else. */
const Refund = z.looseObject({
  id: PlatformId,
  reason: text,
  /** Older versions name the reason `refund`. */
  refund: text,
  total: PlatformAmount,
});
export type WooRefund = z.infer<typeof Refund>;

/** order.created and order.updated. */
export const WooOrder = z.looseObject({
  id: PlatformId,
  number: PlatformId.nullish(),
  status: z.string(),
  currency: z.string().regex(/^[A-Z]{3}$/, { error: 'must be an ISO 4217 code such as USD' }),
  prices_include_tax: z.boolean(),
  date_created_gmt: GmtDateTime,
  date_modified_gmt: GmtDateTime.nullish(),
  date_paid_gmt: GmtDateTime.nullish(),
  customer_id: PlatformId,
  billing: WooAddress.nullish(),
  shipping: WooAddress.nullish(),
  total: PlatformAmount,
  total_tax: PlatformAmount,
  line_items: z.array(LineItem),
  shipping_lines: list(ShippingLine),
  fee_lines: list(FeeLine),
  tax_lines: list(TaxLine),
  refunds: list(Refund),
});
export type WooOrder = z.infer<typeof WooOrder>;

/** order.deleted: WooCommerce sends only the id of a deleted (or trashed) resource. */
export const WooDeleted = z.looseObject({ id: PlatformId });
export type WooDeleted = z.infer<typeof WooDeleted>;

/** customer.created and customer.updated. */
export const WooCustomer = z.looseObject({
  id: PlatformId,
  email: text,
  first_name: text,
  last_name: text,
  date_created_gmt: GmtDateTime,
  date_modified_gmt: GmtDateTime.nullish(),
  billing: WooAddress.nullish(),
  shipping: WooAddress.nullish(),
});
export type WooCustomer = z.infer<typeof WooCustomer>;
