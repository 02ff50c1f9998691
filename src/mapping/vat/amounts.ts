import type { InvoiceData, Line } from '../../domain/events.js';
import { Money, formatDecimal, roundMoney, type Decimal } from '../../domain/money.js';
import type { VatRateType } from '../../api/schemas/vat.js';
import type { Problems } from '../result.js';
import { present } from './supply.js';

/** Amounts of a VAT submission: lines and shipping as pieces, grouped and rounded once (docs/vat.md, "Amounts"). PURE. */

export const ZERO = new Money(0);
export const HUNDRED = new Money(100);

/** A line or the shipping, with everything the rate and the amounts need. */
export interface Piece {
  field: string;
  /** On the document's basis (tax-inclusive when it is), after its discount and its share of the order discount. */
  amount: Decimal;
  /** Tax charged, as the source states it. */
  tax?: Decimal;
  /** Percentage, once known. */
  rate?: Decimal;
  sku?: string;
  taxCode?: string;
  shipping: boolean;
  /** The line is not a taxable supply (`taxable: false`: a gift card sold, a donation). */
  notTaxable?: true;
}

export interface VatGroup {
  rate: Decimal;
  rateType: VatRateType;
  net: Decimal;
  vat: Decimal;
  gross: Decimal;
  /** Σ of the tax the source states for every piece of the group, when it states it for all. */
  statedTax?: Decimal;
  fields: string[];
}

export const toPercent = (fraction: Decimal): Decimal => new Money(fraction).times(100);
export const rateText = (rate: Decimal): string => (rate.decimalPlaces() <= 2 ? rate.toFixed(2) : formatDecimal(rate));

/** Lines (and shipping) on the document's basis; the order discount spread pro rata, exactly. */
export function piecesOf(data: InvoiceData, problems: Problems): Piece[] {
  const pieces: Piece[] = data.lines.map((line: Line, i) => ({
    field: `lines[${i}]`,
    amount: line.unit_price.times(line.quantity).minus(line.discount ?? ZERO),
    ...(line.tax_amount === undefined ? {} : { tax: line.tax_amount }),
    ...(line.tax_rate === undefined ? {} : { rate: toPercent(line.tax_rate) }),
    ...(present(line.sku) === undefined ? {} : { sku: line.sku }),
    ...(present(line.tax_code) === undefined ? {} : { taxCode: line.tax_code }),
    shipping: false,
    ...(line.taxable === false ? { notTaxable: true as const } : {}),
  }));
  const discount = data.discount ?? ZERO;
  if (!discount.isZero()) {
    const positive = pieces.filter((p) => p.amount.greaterThan(0));
    const base = positive.reduce((sum, p) => sum.plus(p.amount), ZERO);
    if (discount.isNegative()) problems.add('discount', `must not be negative (got ${formatDecimal(discount)})`);
    else if (discount.greaterThan(base)) {
      problems.add('discount', `${formatDecimal(discount)} exceeds the lines' amount after their discounts (${formatDecimal(base)})`);
    } else {
      // Exact shares; the last positive line takes the remainder so the shares add up to the discount.
      let left = discount;
      positive.forEach((p, i) => {
        const share = i === positive.length - 1 ? left : discount.times(p.amount).dividedBy(base);
        left = left.minus(share);
        p.amount = p.amount.minus(share);
      });
    }
  }
  if (data.shipping !== undefined) {
    const amount = data.shipping.amount.minus(data.shipping.discount ?? ZERO);
    if (amount.isNegative() && !amount.isZero()) {
      problems.add('shipping', `shipping ${formatDecimal(data.shipping.amount)} less its discount is negative`);
    } else if (!amount.isZero()) {
      pieces.push({
        field: 'shipping',
        amount,
        ...(data.shipping.tax_amount === undefined ? {} : { tax: data.shipping.tax_amount }),
        ...(present(data.shipping.tax_code) === undefined ? {} : { taxCode: data.shipping.tax_code }),
        shipping: true,
      });
    }
  }
  return pieces;
}

/**
 * Lines that are not a taxable supply (`taxable: false`: a gift card sold, a donation) are no part
 * of the VAT submission, unless `vat.rate_types` maps their sku or tax code to `exempt` or
 * `zero_rated`: then they are reported at 0% of that type (docs/vat.md, "Non-taxable lines").
 * Returns the pieces that stay (the mapped ones with their 0% rate) and the fields left out.
 */
export function withoutNonTaxable(
  pieces: readonly Piece[],
  rateTypes: { by_sku: Readonly<Record<string, VatRateType>>; by_tax_code: Readonly<Record<string, VatRateType>> },
): { taxable: Piece[]; zeroRated: Piece[]; left: string[] } {
  const taxable: Piece[] = [];
  const zeroRated: Piece[] = [];
  const left: string[] = [];
  for (const p of pieces) {
    if (p.notTaxable !== true) {
      taxable.push(p);
      continue;
    }
    const mapped = (p.sku === undefined ? undefined : rateTypes.by_sku[p.sku]) ?? (p.taxCode === undefined ? undefined : rateTypes.by_tax_code[p.taxCode]);
    if (mapped === 'exempt' || mapped === 'zero_rated') zeroRated.push({ ...p, rate: ZERO });
    else left.push(p.field);
  }
  return { taxable, zeroRated, left };
}

/**
 * net, vat and gross of one group, each with exactly 2 decimals, half-up (docs/vat.md, "Amounts"):
 * tax-exclusive: net = round(Σ), vat = round(net × rate / 100), gross = net + vat;
 * tax-inclusive: gross = round(Σ), net = round(gross × 100 / (100 + rate)), vat = gross − net.
 * Rule 1 holds exactly; rule 2 is off by at most 0.005 × (1 + rate / 100).
 */
export function groupAmounts(sum: Decimal, rate: Decimal, inclusive: boolean): { net: Decimal; vat: Decimal; gross: Decimal } {
  if (inclusive) {
    const gross = roundMoney(sum, 2);
    const net = roundMoney(gross.times(HUNDRED).dividedBy(HUNDRED.plus(rate)), 2);
    return { net, vat: gross.minus(net), gross };
  }
  const net = roundMoney(sum, 2);
  const vat = roundMoney(net.times(rate).dividedBy(HUNDRED), 2);
  return { net, vat, gross: net.plus(vat) };
}
