import type { Line } from '../../domain/events.js';
import { summariseFields } from '../../domain/field-errors.js';
import { Money, isoExponent, roundMoney, type Decimal } from '../../domain/money.js';
import { compact, nonBlank, nonZero } from '../shared/fields.js';
import type { XeroLineItem } from './schemas.js';

/**
 * Xero line items as canonical lines, for map.ts: how a document's prices carry tax, and each
 * line's amount and discount. PURE.
 */

/** A record that cannot be mapped, with Xero's own field paths (`LineItems[1].LineAmount`). */
export interface Invalid {
  kind: 'invalid';
  message: string;
  fields: Record<string, string[]>;
}
export const invalid = (message: string, fields: Record<string, string[]>): Invalid => ({ kind: 'invalid', message, fields });
export const isInvalid = (value: unknown): value is Invalid =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'invalid';

export interface Pricing {
  inclusive: boolean;
  /** LineAmountTypes NoTax: no line of the document is taxed. */
  noTax: boolean;
}

/** LineAmountTypes: Exclusive (Xero's default when absent), Inclusive, NoTax (no tax at all: exclusive, every line untaxed). */
export function pricingOf(value: string | null | undefined, at: string): Pricing | Invalid {
  switch ((value ?? 'Exclusive').toLowerCase()) {
    case 'exclusive':
      return { inclusive: false, noTax: false };
    case 'inclusive':
      return { inclusive: true, noTax: false };
    case 'notax':
      return { inclusive: false, noTax: true };
    default:
      return invalid(`LineAmountTypes ${value} is not Exclusive, Inclusive or NoTax`, { [`${at}LineAmountTypes`]: [`unknown value ${value}`] });
  }
}

export function linesOf(items: readonly XeroLineItem[], currency: string, pricing: Pricing, at: string): Line[] | Invalid {
  const lines: Line[] = [];
  let fields: Record<string, string[]> = {};
  items.forEach((item, i) => {
    const line = lineOf(item, currency, pricing, `${at}LineItems[${i}].`);
    if (isInvalid(line)) fields = { ...fields, ...line.fields };
    else lines.push(line);
  });
  return Object.keys(fields).length === 0 ? lines : invalid(`line items cannot be mapped: ${summariseFields(fields, 3)}`, fields);
}

/**
 * A line: UnitAmount × Quantity as given (a line with no UnitAmount, a text line, is 0; Quantity
 * defaults to 1 as in Xero). TaxType NONE ("No GST"/"No Tax") or a NoTax document marks the line
 * not taxable, so the engine computes no tax on what Xero did not tax (docs/mapping.md,
 * "Non-taxable lines"). Description names the line; ItemCode is its SKU.
 */
function lineOf(item: XeroLineItem, currency: string, pricing: Pricing, at: string): Line | Invalid {
  const discount = lineDiscount(item, currency);
  if (!discount.ok) return invalid(discount.message, { [`${at}${discount.field}`]: [discount.message] });
  return compact<Line>({
    id: item.LineItemID ?? undefined,
    product_id: item.Item?.ItemID ?? undefined,
    sku: nonBlank(item.ItemCode) ?? nonBlank(item.Item?.Code),
    name: nonBlank(item.Description) ?? nonBlank(item.Item?.Name),
    unit_price: item.UnitAmount ?? new Money(0),
    quantity: item.Quantity ?? new Money(1),
    discount: discount.value,
    tax_code: nonBlank(item.TaxType),
    tax_amount: item.TaxAmount ?? undefined,
    taxable: pricing.noTax || item.TaxType?.toUpperCase() === 'NONE' ? false : undefined,
  });
}

type Discount = { ok: true; value: Decimal | undefined } | { ok: false; field: string; message: string };

/**
 * The discount of a line, for the whole line, such that the engine's line amount after discount —
 * unit_price × quantity rounded half-up to the currency's minor unit, less the discount
 * (docs/mapping.md) — is exactly Xero's LineAmount, the amount Xero charged and taxed. Xero rounds
 * a rate's result to cents (19.95 at 10% is LineAmount 17.96, TotalDiscount 1.99, not 1.995), so
 * the discount is taken from LineAmount rather than from DiscountRate: exact decimal arithmetic,
 * never a float. Without LineAmount, DiscountAmount, else UnitAmount × Quantity × DiscountRate ÷
 * 100 (exact: it terminates). A line without DiscountRate or DiscountAmount has no discount (a
 * cent Xero rounded differently is not a discount). A discount below 0 or above the line is refused.
 */
export function lineDiscount(
  item: Pick<XeroLineItem, 'Quantity' | 'UnitAmount' | 'LineAmount' | 'DiscountRate' | 'DiscountAmount'>,
  currency: string,
): Discount {
  const rate = item.DiscountRate == null || item.DiscountRate.isZero() ? undefined : item.DiscountRate;
  const amount = item.DiscountAmount == null || item.DiscountAmount.isZero() ? undefined : item.DiscountAmount;
  if (rate === undefined && amount === undefined) return { ok: true, value: undefined };
  const gross = (item.UnitAmount ?? new Money(0)).times(item.Quantity ?? new Money(1));
  const charged = roundMoney(gross, isoExponent(currency));
  let discount: Decimal;
  let field: string;
  if (item.LineAmount != null) [discount, field] = [charged.minus(item.LineAmount), 'LineAmount'];
  else if (amount !== undefined) [discount, field] = [amount, 'DiscountAmount'];
  else [discount, field] = [gross.times(rate ?? 0).dividedBy(100), 'DiscountRate'];
  if (discount.isNegative() || discount.greaterThan(Money.max(charged, 0))) {
    const message = `a discount of ${discount.toFixed()} does not fit a line of ${charged.toFixed()} (UnitAmount × Quantity)`;
    return { ok: false, field, message };
  }
  return { ok: true, value: nonZero(new Money(discount)) };
}
