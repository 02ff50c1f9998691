import type { InvoiceData } from '../domain/events.js';
import { Money, formatMoney, isoExponent, type Decimal } from '../domain/money.js';

/**
 * PURE: charged-vs-calculated tax. The tax the platform charged the customer (from the payload:
 * the invoice's `tax_total`, else its lines' and shipping's `tax_amount`) against the tax the
 * engine computed (`tax.total_tax` of its answer). A variance is recorded when the difference is
 * above BOTH thresholds: an absolute amount (noise of rounding per line) and a share of the
 * engine's tax (a cent on a large invoice is not a finding).
 */

export interface VarianceThresholds {
  /** TAXSYNC_TAX_VARIANCE_ABS: in the invoice's currency (default 0.05). */
  abs: Decimal;
  /** TAXSYNC_TAX_VARIANCE_PCT: percent of the engine's tax (default 0.5). */
  pct: Decimal;
}

export const DEFAULT_VARIANCE_THRESHOLDS: VarianceThresholds = { abs: new Money('0.05'), pct: new Money('0.5') };

/** The thresholds from their configured decimal strings. */
export function varianceThresholds(config: { abs: string; pct: string }): VarianceThresholds {
  return { abs: new Money(config.abs), pct: new Money(config.pct) };
}

/** What the platform charged, when its payload says: undefined when it states no tax at all. */
export function chargedTax(invoice: InvoiceData): Decimal | undefined {
  if (invoice.tax_total !== undefined) return new Money(invoice.tax_total);
  const parts = [...invoice.lines.map((l) => l.tax_amount), invoice.shipping?.tax_amount].filter((t): t is Decimal => t !== undefined);
  if (parts.length === 0) return undefined;
  return parts.reduce((sum, t) => sum.plus(t), new Money(0));
}

export interface Variance {
  currency: string;
  charged: string;
  computed: string;
  /** charged − computed, in the currency's minor unit. */
  difference: string;
  /** |difference| as a percent of the computed tax; null when the engine computed none. */
  percent: string | null;
}

/** The variance of one invoice, or undefined when it is within the thresholds (or cannot be computed). */
export function taxVariance(invoice: InvoiceData, computedTax: string | undefined, thresholds: VarianceThresholds): Variance | undefined {
  const charged = chargedTax(invoice);
  if (charged === undefined || computedTax === undefined) return undefined;
  const computed = new Money(computedTax);
  const decimals = isoExponent(invoice.currency);
  const difference = new Money(formatMoney(charged.minus(computed), decimals));
  const abs = difference.abs();
  if (!abs.greaterThan(thresholds.abs)) return undefined;
  const percent = computed.isZero() ? null : abs.dividedBy(computed.abs()).times(100);
  if (percent !== null && !percent.greaterThan(thresholds.pct)) return undefined;
  return {
    currency: invoice.currency,
    charged: formatMoney(charged, decimals),
    computed: formatMoney(computed, decimals),
    difference: difference.toFixed(decimals),
    percent: percent === null ? null : percent.toDecimalPlaces(2).toFixed(2),
  };
}
