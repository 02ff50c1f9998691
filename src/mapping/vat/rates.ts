import type { VatRateType } from '../../api/schemas/vat.js';
import type { InvoiceData } from '../../domain/events.js';
import { Money, formatDecimal, isoExponent, roundMoney, type Decimal } from '../../domain/money.js';
import type { Problems } from '../result.js';
import type { VatSettings } from '../vat-settings.js';
import { HUNDRED, ZERO, rateText, type Piece } from './amounts.js';
import { KIND_LABEL, type Supply, type SupplyKind } from './supply.js';

/** VAT rates and rate types of the pieces of an invoice (docs/vat.md, "Rates", "Rate types"). PURE. */

/**
 * The rate that reproduces a charged tax: among `candidates` (the invoice's own stated rates, then
 * the configured rates of the VAT country), the closest one within `unit`; else the exact
 * quotient rounded half-up to 2 decimals (noted).
 */
function inferRate(
  amount: Decimal,
  tax: Decimal,
  inclusive: boolean,
  candidates: readonly Decimal[],
  unit: Decimal,
): { rate: Decimal; inferred: boolean } | { problem: string } {
  if (tax.isZero()) return { rate: ZERO, inferred: false };
  const base = inclusive ? amount.minus(tax) : amount;
  if (!base.greaterThan(0)) return { problem: `tax ${formatDecimal(tax)} is charged on an amount of ${formatDecimal(base)}` };
  let best: { rate: Decimal; diff: Decimal } | undefined;
  for (const k of candidates) {
    const diff = base.times(k).dividedBy(HUNDRED).minus(tax).abs();
    if (diff.lessThanOrEqualTo(unit) && (best === undefined || diff.lessThan(best.diff))) best = { rate: k, diff };
  }
  if (best !== undefined) return { rate: best.rate, inferred: false };
  return { rate: roundMoney(tax.times(HUNDRED).dividedBy(base), 2), inferred: true };
}

function uniqueRates(rates: readonly Decimal[]): Decimal[] {
  const out: Decimal[] = [];
  for (const r of rates) if (!out.some((o) => o.equals(r))) out.push(r);
  return out;
}

/**
 * Every piece's rate (docs/vat.md, "Rates"): vat.vat_rate for all; else the line's tax_rate;
 * else inferred from its tax_amount; else, when no line states any tax, from tax_total; else 0
 * for a zero-rated cross-border supply that states no tax at all. Shipping: its own tax_amount
 * picks among the line rates, else it follows the highest line rate.
 */
export function assignRates(
  data: InvoiceData,
  pieces: Piece[],
  supply: Supply,
  settings: VatSettings,
  problems: Problems,
  notes: string[],
): void {
  const stated = data.vat?.vat_rate;
  if (stated !== undefined) {
    for (const p of pieces) p.rate = stated;
    return;
  }
  const unit = new Money(10).pow(-isoExponent(data.currency));
  const configured = settings.rates[supply.vatCountry];
  const configuredRates = configured === undefined ? [] : [configured.standard, ...configured.reduced].filter((r) => r !== undefined).map((r) => new Money(r));
  const lines = pieces.filter((p) => !p.shipping);
  const candidates = uniqueRates([...lines.flatMap((p) => (p.rate === undefined ? [] : [p.rate])), ...configuredRates]);
  const noLineTax = lines.every((p) => p.rate === undefined && p.tax === undefined);

  if (noLineTax) {
    const total = data.tax_total;
    if (total !== undefined) {
      const amount = pieces.reduce((sum, p) => sum.plus(p.amount), ZERO);
      const found = inferRate(amount, total, data.tax_inclusive, configuredRates, unit.times(pieces.length));
      if ('problem' in found) problems.add('tax_total', found.problem);
      else {
        for (const p of pieces) p.rate = found.rate;
        notes.push(`one VAT rate ${rateText(found.rate)}% for the whole invoice, from tax_total ${formatDecimal(total)}${found.inferred ? ' (inferred: no configured rate reproduces it)' : ''}`);
      }
      return;
    }
    const shippingTaxed = pieces.some((p) => p.shipping && p.tax !== undefined && !p.tax.isZero());
    if ((supply.kind === 'intra_eu' || supply.kind === 'export') && !shippingTaxed) {
      for (const p of pieces) p.rate = ZERO;
      notes.push(`the invoice states no tax: a zero-rated ${KIND_LABEL[supply.kind]} supply`);
      return;
    }
    problems.add('vat_rate', 'the invoice states no VAT: give lines[].tax_rate or tax_amount, tax_total, or vat.vat_rate');
    return;
  }

  for (const p of lines) {
    if (p.rate !== undefined) continue;
    if (p.tax === undefined) {
      problems.add(`${p.field}.tax_rate`, 'no VAT rate for this line: other lines state one; give tax_rate or tax_amount');
      continue;
    }
    const found = inferRate(p.amount, p.tax, data.tax_inclusive, candidates, unit);
    if ('problem' in found) problems.add(`${p.field}.tax_amount`, found.problem);
    else {
      p.rate = found.rate;
      if (found.inferred) notes.push(`${p.field}: VAT rate ${rateText(found.rate)}% inferred from its tax_amount ${formatDecimal(p.tax)}`);
    }
  }
  const lineRates = uniqueRates(lines.flatMap((p) => (p.rate === undefined ? [] : [p.rate])));
  for (const p of pieces.filter((x) => x.shipping)) {
    const highest = lineRates.reduce<Decimal | undefined>((max, r) => (max === undefined || r.greaterThan(max) ? r : max), undefined);
    if (p.tax !== undefined) {
      const found = inferRate(p.amount, p.tax, data.tax_inclusive, uniqueRates([...lineRates, ...configuredRates]), unit);
      if ('problem' in found) problems.add('shipping.tax_amount', found.problem);
      else p.rate = found.rate;
    } else if (highest !== undefined) p.rate = highest;
  }
}

const CROSS_BORDER_ZERO: ReadonlySet<SupplyKind> = new Set(['intra_eu', 'export']);

/** vat_rate_type of a piece (docs/vat.md, "Rate types"). */
export function rateTypeOf(p: Piece, rate: Decimal, supply: Supply, settings: VatSettings, stated: VatRateType | undefined, problems: Problems): VatRateType {
  const zero = rate.isZero();
  if (stated !== undefined) {
    if (zero !== (stated === 'zero_rated' || stated === 'exempt')) {
      problems.add('vat_rate_type', `vat.vat_rate_type ${stated} does not fit the VAT rate ${rateText(rate)}% of ${p.field}`);
    }
    return stated;
  }
  const rules = settings.rate_types;
  const mapped = (p.sku === undefined ? undefined : rules.by_sku[p.sku]) ?? (p.taxCode === undefined ? undefined : rules.by_tax_code[p.taxCode]);
  if (zero) {
    if (mapped === 'exempt' || mapped === 'zero_rated') return mapped;
    return CROSS_BORDER_ZERO.has(supply.kind) ? 'zero_rated' : rules.zero_rate;
  }
  if (mapped === 'exempt' || mapped === 'zero_rated') {
    problems.add(`${p.field}.tax_rate`, `classified ${mapped} by vat.rate_types, but VAT of ${rateText(rate)}% is charged`);
    return mapped;
  }
  if (mapped !== undefined) return mapped;
  const reduced = settings.rates[supply.vatCountry]?.reduced ?? [];
  return reduced.some((r) => new Money(r).equals(rate)) ? 'reduced' : 'standard';
}
