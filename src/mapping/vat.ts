import { VatTransactionRequest, type VatRateType } from '../api/schemas/vat.js';
import type { InvoiceData, Line, RefundData } from '../domain/events.js';
import type { FieldErrors } from '../domain/errors.js';
import { Money, formatDecimal, formatMoney, isoExponent, roundMoney, type Decimal } from '../domain/money.js';
import { EU_MEMBERS } from '../domain/reference/countries.js';
import type { RecordKey } from '../domain/record-key.js';
import { issuesToFields } from '../api/parse.js';
import { Problems, ignore, invalid, wait, type MapResult, type NotSent } from './result.js';
import { validateVatTransaction } from './vat-validation.js';
import {
  registrationRef,
  vatEnabled,
  type ReportingPeriod,
  type SubmitWhen,
  type VatRegistration,
  type VatScheme,
  type VatSettings,
} from './vat-settings.js';

/**
 * invoice.upserted → bodies of `POST /api/vat/v1/transactions/` (docs/vat.md). PURE: the
 * processor passes in the settings, the transaction types list, today, the resolved entity
 * jurisdictions and, for refunds, cancellations and updates, what the ledger knows.
 */

const ZERO = new Money(0);
const HUNDRED = new Money(100);

// ---------------------------------------------------------------------------------------------
// Which invoices, and where their VAT belongs

/** How a supply is taxed, from the seller's and the customer's countries. */
export type SupplyKind = 'domestic' | 'intra_eu' | 'distance_sale' | 'export';

export interface Supply {
  kind: SupplyKind;
  seller: string;
  /** Where the goods go (place of supply): shipping country, else the partner's country. */
  destination: string;
  /** The partner's country for the body (the VAT number's country): billing, else shipping. */
  partnerCountry: string;
  vatNumber?: string;
  /** The partner has a VAT number. */
  b2b: boolean;
  /** Whose VAT the supply carries, and under which scheme it is reported. */
  vatCountry: string;
  scheme: VatScheme;
}

/** The parties of an invoice or a credit, as the canonical data gives them. */
interface Parties {
  addresses?: InvoiceData['addresses'];
  customer?: InvoiceData['customer'];
  vat?: InvoiceData['vat'];
}

const KIND_LABEL: Readonly<Record<SupplyKind, string>> = { domestic: 'domestic', intra_eu: 'intra-EU', distance_sale: 'distance', export: 'export' };

const present = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
};

function partiesOf(data: Parties): { destination?: string; partnerCountry?: string; vatNumber?: string } {
  const billing = data.addresses?.billing?.country ?? data.customer?.addresses?.billing?.country;
  const shipping = data.addresses?.shipping?.country ?? data.customer?.addresses?.shipping?.country;
  const stated = data.vat?.partner_country;
  const vatNumber = present(data.vat?.vat_number) ?? present(data.customer?.tax_number);
  const destination = shipping ?? stated ?? billing;
  const partnerCountry = stated ?? billing ?? shipping;
  return {
    ...(destination === undefined ? {} : { destination }),
    ...(partnerCountry === undefined ? {} : { partnerCountry }),
    ...(vatNumber === undefined ? {} : { vatNumber }),
  };
}

/**
 * The configured registration that covers VAT of `country` under `scheme`: a domestic
 * registration in that country, or the OSS registration (which covers EU distance sales to every
 * member state). undefined when none is configured.
 */
export function chooseRegistration(
  registrations: readonly VatRegistration[],
  want: { country: string; scheme: VatScheme },
): VatRegistration | undefined {
  if (want.scheme === 'oss') return registrations.find((r) => r.scheme === 'oss');
  return registrations.find((r) => r.scheme === 'domestic' && r.country === want.country);
}

/**
 * A supply, or why it has no registration or cannot be classified (the field to name, the reason,
 * and the supply when only its registration is missing: an ERP may name the entity jurisdiction).
 */
export type SupplyDecision = { ok: true; supply: Supply } | { ok: false; field: string; reason: string; supply?: Supply };

/**
 * The place-of-supply rules taxsync applies (docs/vat.md, "Which registration"), S the seller's
 * country, D the destination:
 * 1. D = S: domestic, S's VAT.
 * 2. A consumer (no VAT number) in D, and a domestic registration in D: a local sale, D's VAT.
 * 3. D in the EU: a business with a VAT number, S in the EU → intra-EU supply, reported in S;
 *    a consumer → distance sale: `destination` (default) under the OSS, or `origin` (S's VAT,
 *    below the €10,000 threshold). A seller outside the EU without an OSS registration exports.
 * 4. Anything else: an export from S.
 */
export function classifySupply(data: Parties, settings: VatSettings): SupplyDecision {
  const seller = settings.seller_country;
  if (seller === undefined) {
    return { ok: false, field: 'vat.seller_country', reason: 'vat.seller_country is not configured' };
  }
  const { destination, partnerCountry, vatNumber } = partiesOf(data);
  if (destination === undefined || partnerCountry === undefined) {
    return {
      ok: false,
      field: 'partner_country',
      reason: 'the invoice names no country for its customer (no shipping or billing country, no vat.partner_country)',
    };
  }
  const b2b = vatNumber !== undefined;
  const base = { seller, destination, partnerCountry, b2b, ...(vatNumber === undefined ? {} : { vatNumber }) };
  const at = (kind: SupplyKind, vatCountry: string, scheme: VatScheme): SupplyDecision => ({
    ok: true,
    supply: { ...base, kind, vatCountry, scheme },
  });
  const regs = settings.registrations;
  if (destination === seller) return at('domestic', seller, 'domestic');
  if (!b2b && chooseRegistration(regs, { country: destination, scheme: 'domestic' }) !== undefined) {
    return at('domestic', destination, 'domestic');
  }
  const sellerEu = EU_MEMBERS.has(seller);
  if (EU_MEMBERS.has(destination)) {
    if (b2b) return sellerEu ? at('intra_eu', seller, 'domestic') : at('export', seller, 'domestic');
    const oss = chooseRegistration(regs, { country: destination, scheme: 'oss' });
    if (settings.distance_sales === 'origin' && sellerEu) return at('distance_sale', seller, 'domestic');
    if (oss !== undefined) return at('distance_sale', destination, 'oss');
    if (!sellerEu) return at('export', seller, 'domestic');
    return {
      ok: false,
      supply: { ...base, kind: 'distance_sale', vatCountry: destination, scheme: 'oss' },
      field: 'entity_jurisdiction',
      reason:
        `a sale to a consumer in ${destination} (another EU member state) carries ${destination} VAT, and no registration covers it: ` +
        `configure an OSS registration or a domestic registration in ${destination}, or set vat.distance_sales to "origin" (below the EU-wide €10,000 threshold)`,
    };
  }
  return at('export', seller, 'domestic');
}

/** In scope: VAT is on, and a configured registration covers the supply (or the ERP names one). */
export function inVatScope(data: Parties, settings: VatSettings): { inScope: true } | { inScope: false; reason: string } {
  if (!vatEnabled(settings)) return { inScope: false, reason: 'VAT is off: no registrations are configured (vat.registrations)' };
  if (present(data.vat?.entity_jurisdiction) !== undefined) return { inScope: true };
  const decision = classifySupply(data, settings);
  // An invoice that cannot be classified is in scope: the mapper names what is missing (invalid).
  if (!decision.ok) return { inScope: true };
  const { supply } = decision;
  if (chooseRegistration(settings.registrations, { country: supply.vatCountry, scheme: supply.scheme }) === undefined) {
    return {
      inScope: false,
      reason: `a ${KIND_LABEL[supply.kind]} sale from ${supply.seller} to ${supply.destination} is reported in ${supply.vatCountry}, where no registration is configured: outside taxsync's VAT scope`,
    };
  }
  return { inScope: true };
}

/**
 * Whether an invoice is submitted now: VAT on, in scope, not cancelled, and its status is what
 * `submit_when` (per source, else global) asks for — `finalised`: active or paid; `paid`: paid.
 */
export function shouldSubmit(
  invoice: InvoiceData,
  settings: VatSettings,
  source?: string,
): { submit: true } | { submit: false; reason: string } {
  const scope = inVatScope(invoice, settings);
  if (!scope.inScope) return { submit: false, reason: scope.reason };
  if (invoice.status === 'cancelled') return { submit: false, reason: 'the invoice is cancelled' };
  const when: SubmitWhen = (source === undefined ? undefined : settings.submit_when_by_source[source]) ?? settings.submit_when;
  if (when === 'paid' && invoice.status !== 'paid') {
    return { submit: false, reason: `the invoice is ${invoice.status}, and VAT is submitted once it is paid (vat.submit_when)` };
  }
  return { submit: true };
}

// ---------------------------------------------------------------------------------------------
// Dates

/** YYYY-MM-DD `days` after `date` (UTC calendar arithmetic). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The reporting period containing `date`: its first and last day. */
export function reportingPeriodRange(date: string, period: ReportingPeriod): { start: string; end: string } {
  const [year, month] = date.split('-') as [string, string];
  const m = Number(month);
  const first = period === 'monthly' ? m : Math.floor((m - 1) / 3) * 3 + 1;
  const start = `${year}-${String(first).padStart(2, '0')}-01`;
  const next = period === 'monthly' ? first + 1 : first + 3;
  const end = next > 12 ? `${year}-12-31` : addDays(`${year}-${String(next).padStart(2, '0')}-01`, -1);
  return { start, end };
}

/** reporting_period: the first day of the (monthly or quarterly) period containing `date`. */
export function reportingPeriod(date: string, period: ReportingPeriod): string {
  return reportingPeriodRange(date, period).start;
}

/** invoice_date: the date of issued_at as written, in the document's own offset (no shift to UTC). */
export const invoiceDate = (issuedAt: string): string => issuedAt.slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Amounts

/** A line or the shipping, with everything the rate and the amounts need. */
interface Piece {
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

const toPercent = (fraction: Decimal): Decimal => new Money(fraction).times(100);
const rateText = (rate: Decimal): string => (rate.decimalPlaces() <= 2 ? rate.toFixed(2) : formatDecimal(rate));

/** Lines (and shipping) on the document's basis; the order discount spread pro rata, exactly. */
function piecesOf(data: InvoiceData, problems: Problems): Piece[] {
  const pieces: Piece[] = data.lines.map((line: Line, i) => ({
    field: `lines[${i}]`,
    amount: line.unit_price.times(line.quantity).minus(line.discount ?? ZERO),
    ...(line.tax_amount === undefined ? {} : { tax: line.tax_amount }),
    ...(line.tax_rate === undefined ? {} : { rate: toPercent(line.tax_rate) }),
    ...(present(line.sku) === undefined ? {} : { sku: line.sku }),
    ...(present(line.tax_code) === undefined ? {} : { taxCode: line.tax_code }),
    shipping: false,
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
function assignRates(
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
function rateTypeOf(p: Piece, rate: Decimal, supply: Supply, settings: VatSettings, stated: VatRateType | undefined, problems: Problems): VatRateType {
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

// ---------------------------------------------------------------------------------------------
// Transaction types

export interface TransactionTypeRef {
  id: string;
  name: string;
}

/** The id of the type with this name (trimmed, case-insensitive), or of this id; a problem when absent or ambiguous. */
export function transactionTypeId(types: readonly TransactionTypeRef[], nameOrId: string): { id: string } | { problem: string } {
  const wanted = nameOrId.trim().toLowerCase();
  const byId = types.find((t) => t.id.toLowerCase() === wanted);
  if (byId !== undefined) return { id: byId.id };
  const ids = [...new Set(types.filter((t) => t.name.trim().toLowerCase() === wanted).map((t) => t.id))];
  if (ids.length === 1) return { id: ids[0] as string };
  const names = types.map((t) => t.name).join(', ') || 'none';
  if (ids.length === 0) return { problem: `the transaction types list has no type named "${nameOrId}" (it has: ${names})` };
  return { problem: `the transaction types list has ${ids.length} types named "${nameOrId}" (${ids.join(', ')})` };
}

/**
 * The type name of one group (docs/vat.md, "Transaction types"): vat.transaction_type when the ERP
 * states it; zero-rated intra-EU → Intra-EU Supplies; zero-rated export → Exports when the list
 * has it; otherwise B2B Sales with a partner VAT number, B2C Sales without. Import Services (a
 * purchase under the reverse charge) is never derived from a sales invoice: only stated.
 */
export function transactionTypeName(
  supply: Supply,
  rateType: VatRateType,
  settings: VatSettings,
  types: readonly TransactionTypeRef[],
): { name: string; note?: string } {
  const names = settings.transaction_types;
  const sales = supply.b2b ? names.b2b : names.b2c;
  if (rateType === 'zero_rated' && supply.kind === 'intra_eu') return { name: names.intra_eu };
  if (rateType === 'zero_rated' && supply.kind === 'export') {
    if ('id' in transactionTypeId(types, names.export)) return { name: names.export };
    return { name: sales, note: `zero-rated export sent as ${sales}: the transaction types list has no "${names.export}"` };
  }
  return { name: sales };
}

// ---------------------------------------------------------------------------------------------
// The mapper

export interface VatMappingContext {
  /** The invoice's record (kind transaction, or vat). Its external_id is the fallback invoice number. */
  key: RecordKey;
  /** The connector's configured source. @defaultValue key.source */
  source?: string;
  settings: VatSettings;
  /** The service's transaction types list (GET …/transaction-types/), fetched by the caller. */
  transactionTypes: readonly TransactionTypeRef[];
  /** Today, YYYY-MM-DD (UTC, the business clock): rule 3. */
  today: string;
  /** registrationRef(registration) → entity_jurisdiction UUID, for registrations configured by taxable jurisdiction. */
  resolved?: ReadonlyMap<string, string>;
}

/** The invoice number's base: prefix per source + the document number (else the external id). */
export function baseInvoiceNumber(data: Pick<InvoiceData, 'number'>, key: RecordKey, settings: VatSettings, source = key.source): string {
  const prefix = settings.invoice_number.prefix_by_source[source] ?? '';
  const number = settings.invoice_number.from === 'number' ? present(data.number) : undefined;
  return `${prefix}${number ?? key.external_id}`;
}

/** The invoice number of one part of a split: `INV-1 (19.00% standard)`. */
export const splitInvoiceNumber = (base: string, rate: Decimal, rateType: VatRateType): string => `${base} (${rateText(rate)}% ${rateType})`;

/**
 * invoice.upserted → one VAT transaction per VAT rate (usually exactly one). Every body is parsed
 * with VatTransactionRequest and checked with validateVatTransaction (every rule but 7) before it
 * is returned as `send`; `notes` carry the facts worth a log line (inferred rates, dropped zero
 * parts, differences from the tax the source states).
 */
export function mapVatSubmission(data: InvoiceData, ctx: VatMappingContext): MapResult<VatTransactionRequest[]> {
  const { key, settings } = ctx;
  const source = ctx.source ?? key.source;
  const what = `VAT for invoice ${key.external_id}`;
  if (key.kind !== 'transaction' && key.kind !== 'vat') {
    return invalid(what, { 'record.kind': [`expected a transaction (or vat) record, got ${key.kind}`] });
  }
  const decision = shouldSubmit(data, settings, source);
  if (!decision.submit) return ignore(`${what}: not submitted: ${decision.reason}`);

  const problems = new Problems();
  const notes: string[] = [];
  // Registration and entity jurisdiction: stated by the ERP, else the covering registration.
  const stated = present(data.vat?.entity_jurisdiction)?.toLowerCase();
  const classified = classifySupply(data, settings);
  // Only a missing registration is forgiven, and only when the ERP names the entity jurisdiction.
  const supply = classified.ok || stated !== undefined ? classified.supply : undefined;
  if (supply === undefined) return invalid(what, classified.ok ? {} : { [classified.field]: [classified.reason] });
  const uuidOf = (r: VatRegistration) => r.entity_jurisdiction ?? ctx.resolved?.get(registrationRef(r))?.toLowerCase();
  const registration =
    stated === undefined
      ? chooseRegistration(settings.registrations, { country: supply.vatCountry, scheme: supply.scheme })
      : settings.registrations.find((r) => uuidOf(r) === stated);
  const entityJurisdiction = stated ?? (registration === undefined ? undefined : uuidOf(registration));
  if (entityJurisdiction === undefined) {
    const reason =
      registration === undefined
        ? `no registration covers ${supply.scheme === 'oss' ? 'the OSS' : `${supply.vatCountry} VAT`}`
        : `registration ${registrationRef(registration)} is not resolved to an entity jurisdiction (it is missing from the registrations list, or resolution failed at start)`;
    return invalid(what, { entity_jurisdiction: [reason] });
  }
  const period = registration?.reporting_period ?? settings.reporting_period;

  const partnerName = present(data.vat?.partner_name) ?? present(data.customer?.name) ?? settings.partner_name_fallback;
  if (partnerName === undefined) {
    problems.add('partner_name', 'the invoice names no partner (vat.partner_name, customer.name); set vat.partner_name_fallback for anonymous sales');
  }
  if (data.lines.length === 0) problems.add('lines', 'the invoice has no lines');

  const pieces = piecesOf(data, problems);
  if (problems.any) return invalid(what, problems.fields);
  assignRates(data, pieces, supply, settings, problems, notes);
  if (problems.any) return invalid(what, problems.fields);

  // Group by (rate, rate type); shipping takes the type of the line group at its rate.
  const groups: { rate: Decimal; rateType: VatRateType; pieces: Piece[] }[] = [];
  const statedType = data.vat?.vat_rate_type;
  for (const p of [...pieces.filter((x) => !x.shipping), ...pieces.filter((x) => x.shipping)]) {
    const rate = p.rate as Decimal;
    const lineGroup = p.shipping && statedType === undefined ? groups.find((g) => g.rate.equals(rate)) : undefined;
    const rateType = lineGroup?.rateType ?? rateTypeOf(p, rate, supply, settings, statedType, problems);
    const group = groups.find((g) => g.rate.equals(rate) && g.rateType === rateType);
    if (group === undefined) groups.push({ rate, rateType, pieces: [p] });
    else group.pieces.push(p);
  }
  if (problems.any) return invalid(what, problems.fields);
  groups.sort((a, b) => b.rate.comparedTo(a.rate) || a.rateType.localeCompare(b.rateType));
  const split = groups.length > 1;
  if (split && settings.mixed_rates === 'reject') {
    const list = groups.map((g) => `${rateText(g.rate)}% ${g.rateType}`).join(', ');
    return invalid(what, {
      vat_rate: [`the invoice has ${groups.length} VAT rates (${list}) and vat.mixed_rates is "reject": one VAT transaction carries one rate; file it by hand or set mixed_rates to "split"`],
    });
  }

  const exponent = isoExponent(data.currency);
  const base = baseInvoiceNumber(data, key, settings, source);
  const date = invoiceDate(data.issued_at);
  const tolerance = new Money(settings.tolerance);
  const bodies: VatTransactionRequest[] = [];
  const fields: FieldErrors = {};
  const knownTypeIds = new Set(ctx.transactionTypes.map((t) => t.id));

  for (const group of groups) {
    const sum = group.pieces.reduce((s, p) => s.plus(p.amount), ZERO);
    const amounts = groupAmounts(sum, group.rate, data.tax_inclusive);
    const number = split ? splitInvoiceNumber(base, group.rate, group.rateType) : base;
    const label = split ? `${number}: ` : '';
    const where = group.pieces.map((p) => p.field).join(', ');
    if (amounts.gross.isZero() && amounts.net.isZero()) {
      notes.push(`${label}the ${rateText(group.rate)}% part (${where}) totals 0.00: nothing to report for it`);
      continue;
    }
    if (!amounts.net.greaterThan(0)) {
      (fields.net ??= []).push(
        `${label}the ${rateText(group.rate)}% part (${where}) nets to ${formatMoney(amounts.net, 2)}: not expressible, the VAT service takes only a positive net (file it as a correction)`,
      );
      continue;
    }
    if (exponent > 2 && sum.decimalPlaces() > 2) {
      notes.push(`${label}${data.currency} amount ${formatDecimal(sum)} rounded half-up to 2 decimals (the VAT service takes at most 2)`);
    }
    if (group.pieces.every((p) => p.tax !== undefined)) {
      const charged = group.pieces.reduce((s, p) => s.plus(p.tax as Decimal), ZERO);
      if (amounts.vat.minus(charged).abs().greaterThan(tolerance)) {
        notes.push(`${label}vat ${formatMoney(amounts.vat, 2)} differs from the tax the source charged (${formatDecimal(charged)}) by more than ${settings.tolerance}`);
      }
    }
    const derived = transactionTypeName(supply, group.rateType, settings, ctx.transactionTypes);
    const statedName = present(data.vat?.transaction_type);
    if (statedName === undefined && derived.note !== undefined) notes.push(`${label}${derived.note}`);
    const typeId = transactionTypeId(ctx.transactionTypes, statedName ?? derived.name);
    if ('problem' in typeId) {
      (fields.transaction_type_id ??= []).push(`${label}${typeId.problem}`);
      continue;
    }
    bodies.push({
      entity_jurisdiction: entityJurisdiction,
      invoice_number: number,
      invoice_date: date,
      partner_name: partnerName as string,
      partner_country: supply.partnerCountry,
      ...(supply.vatNumber === undefined ? {} : { vat_number: supply.vatNumber }),
      net: amounts.net.toFixed(2),
      vat: amounts.vat.toFixed(2),
      gross: amounts.gross.toFixed(2),
      vat_rate: rateText(group.rate),
      vat_rate_type: group.rateType,
      currency: data.currency,
      reporting_period: reportingPeriod(date, period),
      transaction_type_id: typeId.id,
      source,
    });
  }
  if (Object.keys(fields).length > 0) return invalid(what, fields);
  if (bodies.length === 0) return ignore(`${what}: the invoice totals 0.00: nothing to report`);

  // An invoice dated tomorrow in its own zone is today somewhere: wait a day rather than dead-letter.
  if (date > ctx.today && date <= addDays(ctx.today, 1)) {
    return wait(`${what}: invoice_date ${date} is after today (${ctx.today}, UTC); the service refuses future dates (rule 3)`);
  }

  const out: VatTransactionRequest[] = [];
  // Every body through the request schema AND the local rules before it may be sent.
  for (const body of bodies) {
    const label = split ? `${body.invoice_number}: ` : '';
    const parsed = VatTransactionRequest.safeParse(body);
    const errors = parsed.success
      ? validateVatTransaction(parsed.data, { today: ctx.today, knownTypeIds, tolerance: settings.tolerance })
      : issuesToFields(parsed.error.issues);
    if (!parsed.success || Object.keys(errors).length > 0) return invalid(what, labelled(errors, label));
    out.push(parsed.data);
  }
  return { kind: 'send', body: out, ...(notes.length === 0 ? {} : { notes }) };
}

/** Field errors of one part of a split keep the service's field names; the message names the part. */
function labelled(fields: FieldErrors, label: string): FieldErrors {
  if (label === '') return fields;
  return Object.fromEntries(Object.entries(fields).map(([field, messages]) => [field, messages.map((m) => `${label}${m}`)]));
}

// ---------------------------------------------------------------------------------------------
// Refunds, cancellations and changes after submission: not expressible

/**
 * What the ledger knows about the VAT submission of an invoice:
 * - `none`: nothing was submitted and nothing is in flight (never in scope, or not yet due);
 * - `pending`: a submission is pending, in flight or its outcome is unknown;
 * - `submitted`: accepted (confirmed), with the bodies sent.
 */
export type VatOriginal =
  | { state: 'none' }
  | { state: 'pending' }
  | { state: 'submitted'; bodies: readonly VatTransactionRequest[] };

export interface VatCorrectionContext {
  key: RecordKey;
  settings: VatSettings;
  /** The original invoice's VAT submission, as the ledger knows it. */
  original: VatOriginal;
}

const NOT_EXPRESSIBLE =
  'not expressible in the VAT service: it takes only a positive net and has no correction or void endpoint';

function submittedSummary(bodies: readonly VatTransactionRequest[]): string {
  if (bodies.length === 0) return 'its VAT transaction';
  const first = bodies[0] as VatTransactionRequest;
  const numbers = bodies.map((b) => b.invoice_number).join(', ');
  return `VAT transaction ${numbers} (entity jurisdiction ${first.entity_jurisdiction}, reporting period ${first.reporting_period})`;
}

/**
 * refund.created → never a VAT submission. A refund (or credit note) of an invoice whose VAT was
 * submitted is `invalid` with a "not expressible" reason, for the operator to correct in the
 * filing; while the invoice's submission is pending it waits for the outcome; when the invoice was
 * never submitted there is nothing in the VAT service to correct.
 */
export function vatForRefund(refund: RefundData, ctx: VatCorrectionContext): NotSent {
  const what = `VAT for refund ${ctx.key.external_id}`;
  const of = refund.invoice_external_id === undefined ? 'a credit with no invoice' : `invoice ${refund.invoice_external_id}`;
  const amounts = `net ${formatDecimal(refund.amount)}${refund.tax_amount === undefined ? '' : `, VAT ${formatDecimal(refund.tax_amount)}`} ${refund.currency}`;
  if (!vatEnabled(ctx.settings)) return ignore(`${what}: VAT is off (no registrations configured)`);
  if (refund.invoice_external_id === undefined) {
    const scope = inVatScope(refund, ctx.settings);
    if (!scope.inScope) return ignore(`${what}: ${scope.reason}`);
    return invalid(what, { net: [`${of} reduces VAT (${amounts}): ${NOT_EXPRESSIBLE}; correct the filing of its period by hand`] });
  }
  switch (ctx.original.state) {
    case 'none':
      return ignore(`${what}: ${of} has no VAT submission, so nothing in the VAT service to correct`);
    case 'pending':
      return wait(`${what}: the VAT submission of ${of} is pending; its outcome decides whether this refund needs an operator`);
    case 'submitted':
      return invalid(what, {
        net: [
          `refund of ${of} (${amounts}) reduces VAT already reported in ${submittedSummary(ctx.original.bodies)}: ${NOT_EXPRESSIBLE}; correct the filing by hand`,
        ],
      });
  }
}

/**
 * invoice.cancelled (or an upsert with status cancelled) of an invoice whose VAT was submitted →
 * `invalid`, "not expressible" (no void endpoint, no negative amounts). Pending → wait for the
 * outcome. Never submitted → nothing to do.
 */
export function vatForCancellation(_data: Partial<InvoiceData>, ctx: VatCorrectionContext): NotSent {
  const what = `VAT for invoice ${ctx.key.external_id}`;
  if (!vatEnabled(ctx.settings)) return ignore(`${what}: VAT is off (no registrations configured)`);
  switch (ctx.original.state) {
    case 'none':
      return ignore(`${what}: cancelled before any VAT submission; nothing was sent and nothing is sent`);
    case 'pending':
      return wait(`${what}: cancelled while its VAT submission is pending; its outcome decides whether an operator must reverse it`);
    case 'submitted':
      return invalid(what, {
        invoice_number: [
          `the invoice was cancelled after ${submittedSummary(ctx.original.bodies)} was accepted: ${NOT_EXPRESSIBLE}; reverse it in the filing by hand`,
        ],
      });
  }
}

const BODY_FIELDS = Object.keys(VatTransactionRequest.shape) as (keyof VatTransactionRequest)[];

/**
 * An invoice mapped again after some of its VAT transactions were accepted. Bodies already
 * accepted must come out identical (the service has no update): then only the others are sent (or
 * nothing: `ignore`). A changed or vanished accepted body is `invalid`, "not expressible", with
 * each changed field named.
 */
export function vatForUpdate(
  next: MapResult<VatTransactionRequest[]>,
  submitted: readonly VatTransactionRequest[],
): MapResult<VatTransactionRequest[]> {
  if (next.kind !== 'send' || submitted.length === 0) return next;
  const fields: FieldErrors = {};
  for (const before of submitted) {
    const now = next.body.find((b) => b.entity_jurisdiction === before.entity_jurisdiction && b.invoice_number === before.invoice_number);
    if (now === undefined) {
      (fields.invoice_number ??= []).push(`${before.invoice_number} was accepted but the invoice no longer produces it: ${NOT_EXPRESSIBLE}`);
      continue;
    }
    for (const field of BODY_FIELDS) {
      if (now[field] !== before[field]) {
        (fields[field] ??= []).push(
          `${before.invoice_number}: accepted with ${String(before[field])}, now ${String(now[field])}: changed after submission, ${NOT_EXPRESSIBLE}`,
        );
      }
    }
  }
  if (Object.keys(fields).length > 0) return invalid('VAT update', fields);
  const rest = next.body.filter((b) => !submitted.some((s) => s.entity_jurisdiction === b.entity_jurisdiction && s.invoice_number === b.invoice_number));
  if (rest.length === 0) return ignore(`VAT ${submitted.map((b) => b.invoice_number).join(', ')} already accepted, unchanged`);
  return { ...next, body: rest };
}
