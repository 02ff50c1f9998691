import type { InvoiceData, RefundData } from '../domain/events.js';
import { DECIMAL_PATTERN, Decimal, Money, formatDecimal, isoExponent, roundMoney } from '../domain/money.js';
import { ZERO } from './common.js';

/**
 * The share of its original a linked refund takes (invariant 4), computed exactly. Rules and
 * worked examples: docs/mapping.md, "Refund fraction".
 */

/** Decimal places of a fraction whose decimal expansion does not terminate (rounded down). */
export const FRACTION_DECIMALS = 10;

/** What the processor knows about a refund's original transaction. */
export interface OriginalTransaction {
  /** The original's id in the tax engine (sent as created_from). */
  id: string;
  /** The canonical invoice from taxsync's state store, when it has one: preferred. */
  invoice?: InvoiceData;
  /** From the tax engine's response: the fallback when there is no canonical invoice. */
  amounts?: { final_transaction_amount?: string; total_items_amount?: string };
  /** From the tax engine's response; absent is read as false (the engine's default). */
  is_tax_inclusive?: boolean;
  /** The original's tax.total_tax from the tax engine's response. */
  total_tax?: string;
}

export type Basis =
  | { ok: true; numerator: Decimal; denominator: Decimal; explanation: string }
  | { ok: false; field: string; message: string };

const fmt = formatDecimal;
const PERCENTAGE = 'refund_info.refund_linked_percentage';

/**
 * The invoice's amount after every discount, shipping included — the base the engine computed
 * for it (its final_transaction_amount): each line's unit_price × quantity rounded half-up to
 * the currency's minor unit, less the line discounts, less the invoice discount, plus shipping
 * less its discount. Gross when the invoice's prices include tax, net otherwise.
 */
export function invoiceAmount(invoice: InvoiceData): Decimal {
  const scale = isoExponent(invoice.currency);
  let total = ZERO;
  for (const line of invoice.lines) {
    total = total.plus(roundMoney(line.unit_price.times(line.quantity), scale)).minus(line.discount ?? ZERO);
  }
  total = total.minus(invoice.discount ?? ZERO);
  if (invoice.shipping !== undefined) total = total.plus(invoice.shipping.amount).minus(invoice.shipping.discount ?? ZERO);
  return total;
}

const decimalOf = (text: string | undefined): Decimal | undefined =>
  text !== undefined && DECIMAL_PATTERN.test(text) ? new Money(text) : undefined;

/**
 * Numerator and denominator of the fraction, both before tax. The refund's `amount` excludes tax
 * and includes shipping (unless `priced_as_invoice` says it follows a tax-inclusive invoice's
 * pricing: then its net is amount − tax_amount), so it is compared with the original's amount
 * after discounts, shipping included, net of tax:
 * - tax-exclusive original: refund amount ÷ original amount;
 * - tax-inclusive original: net refund amount ÷ (original gross amount − original tax). Comparing
 *   gross amounts instead overstates the share whenever the refund's tax mix differs from the
 *   invoice's (a refund of taxed goods from an invoice with untaxed gift cards or shipping).
 *   Only when the original's tax is unknown, and the refund states its own, is gross compared
 *   with gross.
 * The canonical invoice is used when known; else the engine's amounts of the original.
 */
export function refundBasis(refund: RefundData, original: OriginalTransaction): Basis {
  const tax = refund.tax_amount;
  let total: Decimal;
  let inclusive: boolean;
  let originalTax: Decimal | undefined;
  let described: string;
  const invoice = original.invoice;
  if (invoice !== undefined) {
    if (invoice.currency !== refund.currency) {
      return { ok: false, field: 'currency_details.currency', message: `the refund is in ${refund.currency} but its invoice is in ${invoice.currency}` };
    }
    total = invoiceAmount(invoice);
    inclusive = invoice.tax_inclusive;
    originalTax = invoice.tax_total ?? decimalOf(original.total_tax);
    described = 'invoice amount after discounts, shipping included';
  } else {
    const text = original.amounts?.final_transaction_amount ?? original.amounts?.total_items_amount;
    const fromEngine = decimalOf(text);
    if (fromEngine === undefined) {
      return {
        ok: false,
        field: PERCENTAGE,
        message: `the refunded share of ${original.id} cannot be computed: taxsync has neither its canonical invoice nor its amounts from the tax engine${text === undefined ? '' : ` (got ${JSON.stringify(text)})`}`,
      };
    }
    total = fromEngine;
    inclusive = original.is_tax_inclusive ?? false;
    originalTax = decimalOf(original.total_tax);
    described = original.amounts?.final_transaction_amount === undefined ? "the tax engine's total_items_amount" : "the tax engine's final_transaction_amount";
  }

  if (!inclusive) {
    const amount = refund.amount;
    return { ok: true, numerator: amount, denominator: total, explanation: `refund amount ${fmt(amount)} ÷ ${described} ${fmt(total)} (excluding tax)` };
  }
  const asInvoice = refund.priced_as_invoice === true;
  if (asInvoice && tax === undefined) {
    return {
      ok: false,
      field: PERCENTAGE,
      message: `the refund's amount ${fmt(refund.amount)} includes tax like its invoice's prices, but the refund states no tax_amount, so its net amount is unknown`,
    };
  }
  const net = asInvoice && tax !== undefined ? refund.amount.minus(tax) : refund.amount;
  const netShown = asInvoice ? `(refund amount ${fmt(refund.amount)} − its tax ${fmt(tax ?? ZERO)})` : `refund amount ${fmt(net)}`;
  if (originalTax !== undefined) {
    const invoiceNet = total.minus(originalTax);
    return {
      ok: true,
      numerator: net,
      denominator: invoiceNet,
      explanation: `${netShown} ÷ (${described} ${fmt(total)} − its tax ${fmt(originalTax)}) (prices include tax: net over net)`,
    };
  }
  if (tax !== undefined) {
    const gross = asInvoice ? refund.amount : refund.amount.plus(tax);
    return {
      ok: true,
      numerator: gross,
      denominator: total,
      explanation: `refund amount with its tax ${fmt(gross)} ÷ ${described} ${fmt(total)} (prices include tax; the invoice's tax is unknown, so gross over gross)`,
    };
  }
  return {
    ok: false,
    field: PERCENTAGE,
    message: `the original's prices include tax, but neither the refund's tax_amount nor the original's tax is known, so the refund's share cannot be computed exactly`,
  };
}

// Wide enough that scaling amounts to integers and dividing them loses nothing.
const Wide = Decimal.clone({ precision: 1000, rounding: Decimal.ROUND_DOWN, toExpNeg: -1100, toExpPos: 1100 });

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** p/q terminates in decimal exactly when q, in lowest terms, has no prime factors but 2 and 5. */
function terminates(numerator: bigint, denominator: bigint): boolean {
  const abs = (v: bigint) => (v < 0n ? -v : v);
  let q = abs(denominator) / gcd(abs(numerator), abs(denominator));
  while (q % 2n === 0n) q /= 2n;
  while (q % 5n === 0n) q /= 5n;
  return q === 1n;
}

/**
 * numerator ÷ denominator (denominator ≠ 0): exact when the decimal expansion terminates, else
 * rounded DOWN to FRACTION_DECIMALS places. Rounding down means a refund never claims more than
 * its exact share, so refunds that add up to exactly the whole (six refunds of 1/6) never add up
 * past 1; half-even would give 0.1666666667 × 6 = 1.0000000002.
 */
export function exactFraction(numerator: Decimal, denominator: Decimal): { value: Decimal; exact: boolean } {
  const n = new Wide(numerator);
  const d = new Wide(denominator);
  const scale = new Wide(10).pow(Math.max(n.decimalPlaces(), d.decimalPlaces()));
  const exact = terminates(BigInt(n.times(scale).toFixed(0)), BigInt(d.times(scale).toFixed(0)));
  const quotient = n.dividedBy(d);
  return {
    value: new Money(exact ? quotient : quotient.toDecimalPlaces(FRACTION_DECIMALS, Decimal.ROUND_DOWN)),
    exact,
  };
}
