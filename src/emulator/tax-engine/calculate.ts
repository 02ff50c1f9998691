import { Dec, currencyPlaces, fixed, plain, roundTo } from '../contract/decimal.js';
import type { FieldErrors } from '../contract/primitives.js';
import type { TaxLocation } from './geocode.js';
import { isProductExempt, productRule, ratesAt, type JurisdictionRate, type TaxTable } from './tax-table.js';

/**
 * The tax engine's read-only numbers, as a pure function of a validated transaction and what the
 * routes looked up (location, exemptions, the original of a linked refund). Money is decimal.js
 * throughout; every amount is rounded half-up to the currency's minor unit (ISO 4217 exponent),
 * per item and per jurisdiction level. Rules: docs/emulator.md, "How tax is computed".
 */

export interface ItemInput {
  unit_price: string;
  quantity?: string;
  discount?: string;
  tax_code?: string;
  manual_sales_tax_rate?: string;
  manual_sales_tax_rates?: Record<string, string>;
}

/** An exemption in force for a line: `full` exempts every level, `partial` the state level only. */
export interface ExemptionEffect {
  kind: 'full' | 'partial';
  /** The exemption record, or undefined for customer_type retail_exempt. */
  exemptionId?: string;
}

export interface CalcInput {
  currency: string;
  isTaxInclusive: boolean;
  items: readonly ItemInput[];
  transactionLevelDiscount?: string;
  shipping?: { amount: string; tax_code?: string };
  location: TaxLocation | undefined;
  overrideThreshold: boolean;
  /** In force for every line (retail_exempt customer, or an exemption of the customer that applies). */
  customerExemption?: ExemptionEffect;
  /** Per item: the exemption named by the item's exemption_id, when it applies. */
  itemExemptions?: readonly (ExemptionEffect | undefined)[];
  /** A linked refund takes its tax from the original: original total tax × fraction. */
  linkedRefund?: { originalTotalTax: string; fraction: string };
  table: TaxTable;
}

export interface BreakdownEntry {
  jurisdiction_type: string;
  jurisdiction_name?: string;
  gross_sales: string;
  taxable_amount: string;
  non_taxable_amount: string;
  tax_rate: string;
  tax_due: string;
}

export interface TaxSummary {
  total_tax: string;
  effective_tax_rate: string;
}

export interface ItemResult {
  total_price: string;
  total_price_after_discount: string;
  relative_transaction_discount: string;
  tangible_category: 'tangible' | 'intangible';
  taxable_category: 'taxable' | 'not_taxable';
  taxability_reason: string;
  is_exempt: boolean;
  tax: TaxSummary;
  jurisdiction_tax_breakdown?: Record<string, BreakdownEntry>;
  manual_jurisdiction_tax_breakdown?: Record<string, BreakdownEntry>;
}

export interface ShippingResult {
  amount: string;
  tax_code?: string;
  taxable_category: 'taxable' | 'not_taxable';
  taxability_reason: string;
  tax: TaxSummary;
  jurisdiction_tax_breakdown?: Record<string, BreakdownEntry>;
}

export interface CalcResult {
  items: ItemResult[];
  shipping: ShippingResult | undefined;
  tax: TaxSummary;
  amounts: {
    total_items_amount: string;
    taxable_items_amount: string;
    tangible_items_amount: string;
    non_taxable_amount: string;
    final_transaction_amount: string;
    total_discount: string;
    transaction_level_discount: string;
  };
}

export type CalcOutcome = { ok: true; result: CalcResult } | { ok: false; fields: FieldErrors };

const ZERO = new Dec(0);
const ONE = new Dec(1);

/**
 * Splits `total` over `weights` (each >= 0) pro rata: each share rounded half-up to `decimals`,
 * the rounding remainder added to the share of the largest weight (the first one on a tie), so the
 * shares always sum to `total` exactly. All weights zero: every share is zero.
 */
export function allocate(total: Dec, weights: readonly Dec[], decimals: number): Dec[] {
  const sum = weights.reduce((acc, w) => acc.plus(w), ZERO);
  if (sum.isZero() || total.isZero()) return weights.map(() => ZERO);
  const shares = weights.map((w) => roundTo(total.times(w).dividedBy(sum), decimals));
  const remainder = total.minus(shares.reduce((acc, s) => acc.plus(s), ZERO));
  if (!remainder.isZero()) {
    let largest = 0;
    weights.forEach((w, i) => {
      if (w.greaterThan(weights[largest] as Dec)) largest = i;
    });
    shares[largest] = (shares[largest] as Dec).plus(remainder);
  }
  return shares;
}

/** A rate given as a fraction in [0, 1]; a value above 1 is called out as a likely percentage. */
export function checkFraction(value: string): string | undefined {
  const rate = new Dec(value);
  if (rate.isNegative() && !rate.isZero()) return `must not be negative (got ${value})`;
  if (rate.greaterThan(ONE)) {
    return `must be a decimal fraction between 0 and 1 (0.0825 = 8.25%); ${value} looks like a percentage — send ${plain(rate.dividedBy(100))}`;
  }
  return undefined;
}

interface Line {
  base: Dec;
  taxCode: string | undefined;
  manualRate?: Dec;
  manualRates?: [string, Dec][];
  exemption: ExemptionEffect | undefined;
}

interface LineTax {
  reason: string;
  taxable: boolean;
  isExempt: boolean;
  tax: Dec;
  breakdown?: Record<string, BreakdownEntry>;
  manualBreakdown?: Record<string, BreakdownEntry>;
}

export function calculate(input: CalcInput): CalcOutcome {
  const scale = currencyPlaces(input.currency);
  const fmt = (d: Dec) => fixed(d, scale);
  const fields: FieldErrors = {};
  const fail = (field: string, message: string) => (fields[field] ??= []).push(message);

  // 1. Line amounts and item discounts.
  const totals: Dec[] = [];
  const bases: Dec[] = [];
  const discounts: Dec[] = [];
  input.items.forEach((item, i) => {
    const quantity = new Dec(item.quantity ?? '1');
    if (quantity.isNegative() && !quantity.isZero()) fail(`items[${i}].quantity`, 'must not be negative; a credit line has a negative unit_price');
    const total = roundTo(new Dec(item.unit_price).times(quantity), scale);
    const discount = new Dec(item.discount ?? '0');
    if (discount.isNegative() && !discount.isZero()) fail(`items[${i}].discount`, 'must not be negative');
    else if (total.greaterThan(ZERO) && discount.greaterThan(total)) fail(`items[${i}].discount`, `${item.discount} exceeds the line amount ${fmt(total)}`);
    else if (!total.greaterThan(ZERO) && !discount.isZero()) fail(`items[${i}].discount`, 'a discount needs a line with a positive amount');
    if (item.manual_sales_tax_rate !== undefined && item.manual_sales_tax_rates !== undefined) {
      fail(`items[${i}].manual_sales_tax_rates`, 'send manual_sales_tax_rate or manual_sales_tax_rates, not both');
    }
    if (item.manual_sales_tax_rate !== undefined) {
      const problem = checkFraction(item.manual_sales_tax_rate);
      if (problem) fail(`items[${i}].manual_sales_tax_rate`, problem);
    }
    for (const [key, rate] of Object.entries(item.manual_sales_tax_rates ?? {})) {
      const problem = checkFraction(rate);
      if (problem) fail(`items[${i}].manual_sales_tax_rates.${key}`, problem);
    }
    totals.push(total);
    discounts.push(discount);
    bases.push(total.minus(discount));
  });

  // 2. The transaction-level discount, pro rata over the lines with a positive amount.
  const tld = new Dec(input.transactionLevelDiscount ?? '0');
  const weights = bases.map((b) => (b.greaterThan(ZERO) ? b : ZERO));
  const positive = weights.reduce((acc, w) => acc.plus(w), ZERO);
  if (tld.isNegative() && !tld.isZero()) fail('transaction_level_discount', 'must not be negative');
  else if (tld.greaterThan(positive)) {
    fail('transaction_level_discount', `${input.transactionLevelDiscount} exceeds the items' amount after item discounts (${fmt(positive)})`);
  } else if (!tld.isZero() && tld.decimalPlaces() > scale) {
    fail('transaction_level_discount', `has more decimals than ${input.currency} allows (${scale})`);
  }
  const shipping = input.shipping === undefined ? undefined : new Dec(input.shipping.amount);
  if (shipping?.isNegative() && !shipping.isZero()) fail('shipping_fee.amount', 'must not be negative');
  if (Object.keys(fields).length > 0) return { ok: false, fields };

  const shares = allocate(tld, weights, scale);
  const afters = bases.map((b, i) => b.minus(shares[i] as Dec));

  // 3. Tax per line.
  const lines: Line[] = input.items.map((item, i) => ({
    base: afters[i] as Dec,
    taxCode: item.tax_code,
    ...(item.manual_sales_tax_rate === undefined ? {} : { manualRate: new Dec(item.manual_sales_tax_rate) }),
    ...(item.manual_sales_tax_rates === undefined
      ? {}
      : { manualRates: Object.entries(item.manual_sales_tax_rates).map(([k, v]): [string, Dec] => [k, new Dec(v)]) }),
    exemption: input.itemExemptions?.[i] ?? input.customerExemption,
  }));
  const shippingLine: Line | undefined =
    shipping === undefined ? undefined : { base: roundTo(shipping, scale), taxCode: input.shipping?.tax_code, exemption: input.customerExemption };
  const all = shippingLine === undefined ? lines : [...lines, shippingLine];
  const taxes = all.map((line) => lineTax(line, input, scale));

  if (input.linkedRefund !== undefined) {
    const refundTax = roundTo(new Dec(input.linkedRefund.originalTotalTax).times(input.linkedRefund.fraction), scale);
    let split = taxes.map((t) => (t.tax.greaterThan(ZERO) ? t.tax : ZERO));
    if (split.every((w) => w.isZero())) split = all.map((l) => (l.base.greaterThan(ZERO) ? l.base : ZERO));
    const refundShares = allocate(refundTax, split, scale);
    taxes.forEach((t, i) => {
      t.tax = refundShares[i] as Dec;
      delete t.breakdown;
      delete t.manualBreakdown;
    });
    // No line to carry it (no positive line): the whole refund tax stays at transaction level.
    if (split.every((w) => w.isZero())) return { ok: true, result: assemble(refundTax) };
  }
  return { ok: true, result: assemble(taxes.reduce((acc, t) => acc.plus(t.tax), ZERO)) };

  function assemble(totalTax: Dec): CalcResult {
    const items: ItemResult[] = input.items.map((item, i) => {
      const t = taxes[i] as LineTax;
      const base = afters[i] as Dec;
      return {
        total_price: fmt(totals[i] as Dec),
        total_price_after_discount: fmt(base),
        relative_transaction_discount: fmt(shares[i] as Dec),
        tangible_category: productRule(input.table, item.tax_code).tangible ? 'tangible' : 'intangible',
        taxable_category: t.taxable ? 'taxable' : 'not_taxable',
        taxability_reason: t.reason,
        is_exempt: t.isExempt,
        tax: { total_tax: fmt(t.tax), effective_tax_rate: effectiveRate(t.tax, base, input.isTaxInclusive) },
        ...(t.breakdown === undefined ? {} : { jurisdiction_tax_breakdown: t.breakdown }),
        ...(t.manualBreakdown === undefined ? {} : { manual_jurisdiction_tax_breakdown: t.manualBreakdown }),
      };
    });
    let shippingResult: ShippingResult | undefined;
    if (shippingLine !== undefined && input.shipping !== undefined) {
      const t = taxes[taxes.length - 1] as LineTax;
      shippingResult = {
        amount: input.shipping.amount,
        ...(input.shipping.tax_code === undefined ? {} : { tax_code: input.shipping.tax_code }),
        taxable_category: t.taxable ? 'taxable' : 'not_taxable',
        taxability_reason: t.reason,
        tax: { total_tax: fmt(t.tax), effective_tax_rate: effectiveRate(t.tax, shippingLine.base, input.isTaxInclusive) },
        ...(t.breakdown === undefined ? {} : { jurisdiction_tax_breakdown: t.breakdown }),
      };
    }
    const sum = (values: Dec[]) => values.reduce((acc, v) => acc.plus(v), ZERO);
    const itemsAmount = sum(afters);
    const taxableAmount = sum(afters.filter((_, i) => (taxes[i] as LineTax).taxable));
    const tangibleAmount = sum(afters.filter((_, i) => productRule(input.table, input.items[i]?.tax_code).tangible));
    const final = itemsAmount.plus(shippingLine?.base ?? ZERO);
    return {
      items,
      shipping: shippingResult,
      tax: { total_tax: fmt(totalTax), effective_tax_rate: effectiveRate(totalTax, final, input.isTaxInclusive) },
      amounts: {
        total_items_amount: fmt(itemsAmount),
        taxable_items_amount: fmt(taxableAmount),
        tangible_items_amount: fmt(tangibleAmount),
        non_taxable_amount: fmt(itemsAmount.minus(taxableAmount)),
        final_transaction_amount: fmt(final),
        total_discount: fmt(sum(discounts)),
        transaction_level_discount: fmt(tld),
      },
    };
  }
}

/** Tax over the rate: blended, 6 decimals; against the net amount when prices include tax. */
function effectiveRate(tax: Dec, base: Dec, inclusive: boolean): string {
  const net = inclusive ? base.minus(tax) : base;
  if (net.isZero()) return '0';
  return plain(tax.dividedBy(net).toDecimalPlaces(6));
}

/** Tax at `rate` on `base`: base × rate, or the tax contained in base when prices include tax. */
function taxOn(base: Dec, rate: Dec, inclusive: boolean, scale: number): Dec {
  return roundTo(inclusive ? base.times(rate).dividedBy(ONE.plus(rate)) : base.times(rate), scale);
}

function lineTax(line: Line, input: CalcInput, scale: number): LineTax {
  const fmt = (d: Dec) => fixed(d, scale);
  const { location } = input;
  const state = location?.state;
  const levels: JurisdictionRate[] = state === undefined ? [] : ratesAt(state, location?.locality);
  const entry = (level: JurisdictionRate | { level: string; name?: string; rate: string }, taxable: Dec, nonTaxable: Dec, due: Dec) => ({
    jurisdiction_type: level.level,
    ...(level.name === undefined ? {} : { jurisdiction_name: level.name }),
    gross_sales: fmt(line.base),
    taxable_amount: fmt(taxable),
    non_taxable_amount: fmt(nonTaxable),
    tax_rate: plain(new Dec(level.rate)),
    tax_due: fmt(due),
  });
  const zeroBreakdown = () =>
    levels.length === 0 ? undefined : Object.fromEntries(levels.map((l) => [l.level, entry(l, ZERO, line.base, ZERO)]));
  const notTaxable = (reason: string, breakdown = zeroBreakdown()): LineTax => ({
    reason,
    taxable: false,
    isExempt: reason === 'customer_exempt',
    tax: ZERO,
    ...(breakdown === undefined ? {} : { breakdown }),
  });

  // Customer exemptions win over everything, manual rates included.
  if (line.exemption?.kind === 'full') return notTaxable('customer_exempt');

  // Manual rates bypass the automatic calculation: location, nexus and product rules.
  if (line.manualRate !== undefined) {
    const tax = taxOn(line.base, line.manualRate, input.isTaxInclusive, scale);
    return { reason: line.manualRate.isZero() ? 'zero_rated' : 'standard_rated', taxable: true, isExempt: false, tax };
  }
  if (line.manualRates !== undefined) {
    const rates = line.manualRates;
    const combined = rates.reduce((acc, [, r]) => acc.plus(r), ZERO);
    const total = taxOn(line.base, combined, input.isTaxInclusive, scale);
    const dues = input.isTaxInclusive ? allocate(total, rates.map(([, r]) => r), scale) : rates.map(([, r]) => taxOn(line.base, r, false, scale));
    const net = input.isTaxInclusive ? line.base.minus(total) : line.base;
    const manualBreakdown = Object.fromEntries(
      rates.map(([key, rate], i) => [key, entry({ level: key, rate: rate.toFixed() }, net, ZERO, dues[i] as Dec)]),
    );
    const tax = dues.reduce((acc, d) => acc.plus(d), ZERO);
    return { reason: combined.isZero() ? 'zero_rated' : 'standard_rated', taxable: true, isExempt: false, tax, manualBreakdown };
  }

  if (location?.country !== undefined && location.country !== input.table.country) return notTaxable('not_subject_to_tax');
  if (state === undefined) return notTaxable('not_collecting');
  if (!state.nexus && !input.overrideThreshold) return notTaxable('not_collecting', undefined);
  if (isProductExempt(state, line.taxCode)) return notTaxable('product_exempt');

  const partial = line.exemption?.kind === 'partial';
  const taxed = levels.filter((l) => !(partial && l.level === 'state'));
  const combined = taxed.reduce((acc, l) => acc.plus(l.rate), ZERO);
  let dues: Dec[];
  let net: Dec;
  if (input.isTaxInclusive) {
    const total = taxOn(line.base, combined, true, scale);
    dues = allocate(total, taxed.map((l) => new Dec(l.rate)), scale);
    net = line.base.minus(total);
  } else {
    dues = taxed.map((l) => taxOn(line.base, new Dec(l.rate), false, scale));
    net = line.base;
  }
  const breakdown: Record<string, BreakdownEntry> = {};
  for (const level of levels) {
    const i = taxed.indexOf(level);
    breakdown[level.level] = i === -1 ? entry(level, ZERO, net, ZERO) : entry(level, net, ZERO, dues[i] as Dec);
  }
  const tax = dues.reduce((acc, d) => acc.plus(d), ZERO);
  const reason = partial ? 'customer_exempt' : combined.isZero() ? 'zero_rated' : 'standard_rated';
  return { reason, taxable: true, isExempt: false, tax, breakdown };
}
