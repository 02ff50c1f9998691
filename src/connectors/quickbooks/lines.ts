import type { Line, Shipping } from '../../domain/events.js';
import { Money, roundMoney, type Decimal } from '../../domain/money.js';
import { compact, exactUnits, nonBlank, sum } from '../shared/fields.js';
import type { QboLine, QboSalesTransaction, SalesItemLineDetail } from './schemas.js';

/**
 * The lines, shipping and transaction discount of a QBO sales document (Invoice, SalesReceipt,
 * CreditMemo, RefundReceipt) as canonical ones. PURE. Worked examples with their arithmetic:
 * docs/research/accounting-payloads.md, "QuickBooks amounts, by hand".
 */

/** How a document's amounts are priced: GlobalTaxCalculation, which US companies do not send. */
export type TaxMode = 'exclusive' | 'inclusive' | 'out_of_scope';

/** Field errors named by QuickBooks' own paths (`Invoice.Line[2].SalesItemLineDetail.TaxInclusiveAmt`). */
export type Problems = Record<string, string[]>;
export const addProblem = (problems: Problems, field: string, message: string): void => void (problems[field] ??= []).push(message);

/** Decimals are immutable: one zero serves lines.ts and map.ts. */
export const ZERO = new Money(0);
/** QBO's placeholder item of a shipping line (a line like any other in the API). */
const SHIPPING_ITEM = 'SHIPPING_ITEM_ID';
/** US companies mark a line taxable or not with these two codes; the rate is in TxnTaxDetail. */
const US_TAXABLE = 'TAX';
const US_NOT_TAXABLE = 'NON';

/**
 * TaxExcluded and a US document (no GlobalTaxCalculation): amounts are net. TaxInclusive: the
 * prices the customer saw include tax. NotApplicable ("out of scope of tax" in QBO's form): no
 * tax applies to the document, so its lines are sent as not taxable and the engine computes none,
 * as QuickBooks did; they are priced as given, without tax.
 */
export function taxModeOf(doc: QboSalesTransaction, path: string, problems: Problems): TaxMode | undefined {
  const value = doc.GlobalTaxCalculation;
  if (value === null || value === undefined || value === 'TaxExcluded') return 'exclusive';
  if (value === 'TaxInclusive') return 'inclusive';
  if (value === 'NotApplicable') return 'out_of_scope';
  addProblem(problems, `${path}.GlobalTaxCalculation`, `${value} is not TaxExcluded, TaxInclusive or NotApplicable`);
  return undefined;
}

export interface DocumentAmounts {
  lines: Line[];
  /** SHIPPING_ITEM_ID lines, in the document's pricing. */
  shipping?: Shipping;
  /** The shipping lines' net amounts (a refund's shipping_amount excludes tax). */
  shippingNet?: Decimal;
  /** The transaction discount (DiscountLineDetail), in the document's pricing; zero when none. */
  discount: Decimal;
}

interface Sale {
  line: Line;
  /** What the line charged after its own discount, in the document's pricing (gross when inclusive). */
  charged: Decimal;
  /** QBO's Amount: always net of tax. */
  net: Decimal;
  shipping: boolean;
}

/** Group lines (bundles) are read through to the lines they hold. */
function flatten(doc: QboSalesTransaction, path: string): { line: QboLine; path: string }[] {
  return (doc.Line ?? []).flatMap((line, i) => {
    const at = `${path}.Line[${i}]`;
    if (line.DetailType !== 'GroupLineDetail') return [{ line, path: at }];
    return (line.GroupLineDetail?.Line ?? []).map((inner, j) => ({ line: inner, path: `${at}.GroupLineDetail.Line[${j}]` }));
  });
}

export function documentAmounts(doc: QboSalesTransaction, path: string, mode: TaxMode, scale: number, problems: Problems): DocumentAmounts {
  const taxFree = (doc.TxnTaxDetail?.TotalTax ?? ZERO).isZero();
  const sales: Sale[] = [];
  const discounts: { line: QboLine; path: string }[] = [];
  for (const entry of flatten(doc, path)) {
    const { line } = entry;
    if (line.DetailType === 'SalesItemLineDetail') {
      const sale = saleOf(line, entry.path, mode, scale, taxFree, problems);
      if (sale !== undefined) sales.push(sale);
    } else if (line.DetailType === 'DiscountLineDetail') {
      discounts.push(entry);
    } else if (line.DetailType !== 'SubTotalLineDetail' && line.Amount != null && !line.Amount.isZero()) {
      // SubTotalLineDetail repeats the sum of the lines above it; DescriptionOnly lines carry text only.
      addProblem(problems, `${entry.path}.DetailType`, `a ${line.DetailType} line with an amount is not one taxsync reads`);
    }
  }
  // A shipping line QuickBooks does not tax stays a line marked not taxable: the canonical shipping cannot say so.
  const shippingSales = sales.filter((s) => s.shipping && s.line.taxable !== false);
  const lineSales = sales.filter((s) => !shippingSales.includes(s));
  const subtotal = sum(lineSales.map((s) => s.net));
  const charged = sum(sales.map((s) => s.charged));
  return {
    lines: lineSales.map((s) => s.line),
    ...shippingOf(shippingSales, mode),
    discount: discountOf(discounts, { doc, path, mode, scale, subtotal, charged }, problems),
  };
}

function saleOf(line: QboLine, path: string, mode: TaxMode, scale: number, taxFree: boolean, problems: Problems): Sale | undefined {
  const detail: SalesItemLineDetail = line.SalesItemLineDetail ?? {};
  const net = line.Amount;
  if (net === null || net === undefined) {
    addProblem(problems, `${path}.Amount`, 'a sales line needs its Amount');
    return undefined;
  }
  const priced = mode === 'inclusive' ? grossUnits(net, detail, path, taxFree, problems) : netUnits(net, detail, scale);
  if (priced === undefined) return undefined;
  const code = nonBlank(detail.TaxCodeRef?.value);
  const notTaxed = mode === 'out_of_scope' || code === US_NOT_TAXABLE;
  const item = compact<Line>({
    id: line.Id ?? undefined,
    product_id: detail.ItemRef?.value,
    sku: nonBlank(detail.ItemRef?.name),
    name: nonBlank(line.Description),
    ...priced.units,
    discount: priced.discount,
    // TAX and NON are taxability flags, not classifications: the engine's tax_code stays the settings' choice.
    tax_code: code === US_TAXABLE || code === US_NOT_TAXABLE ? undefined : code,
    tax_amount: priced.tax,
    taxable: notTaxed ? false : undefined,
  });
  return { line: item, charged: priced.charged, net, shipping: detail.ItemRef?.value === SHIPPING_ITEM };
}

interface Priced {
  units: { unit_price: Decimal; quantity: Decimal };
  discount?: Decimal;
  charged: Decimal;
  tax?: Decimal;
}

const given = (value: Decimal | null | undefined): value is Decimal => value !== null && value !== undefined && !value.isZero();

/**
 * A net line: UnitPrice × Qty when that rounds to the Amount QBO charged (it may carry up to 7
 * decimals); a line discount when the line has one and the Amount is below that; otherwise the
 * Amount itself over the quantity (exactly, or as one unit), since the Amount is what was charged.
 */
function netUnits(net: Decimal, detail: SalesItemLineDetail, scale: number): Priced {
  const { UnitPrice: unit, Qty: qty } = detail;
  if (unit !== null && unit !== undefined && qty !== null && qty !== undefined) {
    const full = roundMoney(unit.times(qty), scale);
    if (full.equals(net)) return { units: { unit_price: unit, quantity: qty }, charged: net };
    if ((given(detail.DiscountAmt) || given(detail.DiscountRate)) && full.greaterThan(net)) {
      return { units: { unit_price: unit, quantity: qty }, discount: full.minus(net), charged: net };
    }
  }
  return { units: exactUnits(net, qty ?? new Money(1)), charged: net };
}

/**
 * A TaxInclusive line: Amount and UnitPrice are NET and TaxInclusiveAmt is the gross (UnitPrice
 * 0.9090889 × 450 = 409.09 net, TaxInclusiveAmt 450). The canonical prices of a tax-inclusive
 * document are gross, so the unit price is TaxInclusiveAmt ÷ Qty (exactly, else one unit at the
 * gross); the line's tax is gross − net. A line without TaxInclusiveAmt is gross = net only when
 * the document has no tax at all.
 */
function grossUnits(net: Decimal, detail: SalesItemLineDetail, path: string, taxFree: boolean, problems: Problems): Priced | undefined {
  if (given(detail.DiscountAmt) || given(detail.DiscountRate)) {
    addProblem(problems, `${path}.SalesItemLineDetail.DiscountAmt`, 'a line discount in a TaxInclusive document: whether TaxInclusiveAmt is before or after it is not documented');
    return undefined;
  }
  let gross = detail.TaxInclusiveAmt ?? undefined;
  if (gross === undefined && (net.isZero() || taxFree)) gross = net;
  if (gross === undefined) {
    addProblem(problems, `${path}.SalesItemLineDetail.TaxInclusiveAmt`, 'missing: the gross price of a line of a TaxInclusive document is unknown without it');
    return undefined;
  }
  return { units: exactUnits(gross, detail.Qty ?? new Money(1)), charged: gross, tax: gross.minus(net) };
}

function shippingOf(sales: readonly Sale[], mode: TaxMode): Pick<DocumentAmounts, 'shipping' | 'shippingNet'> {
  if (sales.length === 0) return {};
  const taxes = sales.map((s) => s.line.tax_amount).filter((t): t is Decimal => t !== undefined);
  const shipping = compact<Shipping>({
    amount: sum(sales.map((s) => s.charged)),
    tax_code: sales.find((s) => s.line.tax_code !== undefined)?.line.tax_code,
    tax_amount: mode === 'inclusive' && taxes.length > 0 ? sum(taxes) : undefined,
  });
  return { shipping, shippingNet: sum(sales.map((s) => s.net)) };
}

interface DiscountBasis {
  doc: QboSalesTransaction;
  path: string;
  mode: TaxMode;
  scale: number;
  /** Σ of the sales lines' net amounts, shipping left out: what a percent discount is a percent of. */
  subtotal: Decimal;
  /** Σ of every sales line as charged (gross when inclusive), shipping included. */
  charged: Decimal;
}

/**
 * A DiscountLineDetail is a discount of the whole transaction (the canonical `discount`, never a
 * line). Its Amount is what was taken off; without one, DiscountPercent of the subtotal above it,
 * rounded half-up to the currency as QBO shows it. In a TaxInclusive document the research found
 * no statement whether that Amount is gross or net, so the gross discount is taken from the totals,
 * which say it exactly: Σ gross lines − TotalAmt.
 */
function discountOf(discounts: readonly { line: QboLine; path: string }[], basis: DiscountBasis, problems: Problems): Decimal {
  if (discounts.length === 0) return ZERO;
  const { doc, path, scale } = basis;
  if (basis.mode === 'inclusive') {
    const total = doc.TotalAmt;
    if (total === null || total === undefined) {
      addProblem(problems, `${path}.TotalAmt`, 'needed to tell the gross discount of a TaxInclusive document');
      return ZERO;
    }
    const discount = basis.charged.minus(total);
    if (discount.isNegative()) addProblem(problems, `${path}.TotalAmt`, `is above the gross lines (${basis.charged.toFixed()}) although the document has a discount`);
    return discount;
  }
  return sum(
    discounts.map(({ line, path: at }) => {
      if (line.Amount !== null && line.Amount !== undefined) return line.Amount;
      const percent = line.DiscountLineDetail?.DiscountPercent;
      if (line.DiscountLineDetail?.PercentBased === true && percent !== null && percent !== undefined) return roundMoney(basis.subtotal.times(percent).dividedBy(100), scale);
      addProblem(problems, `${at}.Amount`, 'a discount line needs its Amount or a DiscountPercent');
      return ZERO;
    }),
  );
}
