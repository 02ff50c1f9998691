import type { VatRateType, VatTransactionRequest } from '../../api/schemas/vat.js';
import type { InvoiceData } from '../../domain/events.js';
import type { FieldErrors } from '../../domain/errors.js';
import { Money, formatDecimal, formatMoney, isoExponent, type Decimal } from '../../domain/money.js';
import type { RecordKey } from '../../domain/record-key.js';
import { Problems, ignore, invalid, wait, type MapResult } from '../result.js';
import { checkVatTransaction } from '../vat-validation.js';
import { registrationRef, type VatRegistration, type VatSettings } from '../vat-settings.js';
import { ZERO, groupAmounts, piecesOf, rateText, withoutNonTaxable, type Piece } from './amounts.js';
import { addDays, invoiceDate, reportingPeriod } from './dates.js';
import { assignRates, rateTypeOf } from './rates.js';
import { chooseRegistration, classifySupply, present, shouldSubmit } from './supply.js';
import { transactionTypeId, transactionTypeName, type TransactionTypeRef } from './transaction-types.js';

/**
 * invoice.upserted → bodies of `POST /api/vat/v1/transactions/` (docs/vat.md). PURE: the
 * processor passes in the settings, the transaction types list, today and the resolved entity
 * jurisdictions.
 */

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
 * invoice.upserted → one VAT transaction per VAT rate (usually exactly one). Every body passes
 * checkBody (the request schema and every rule but 7) before it is returned as `send`; `notes` carry the facts worth a log line (inferred rates, dropped zero
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

  const all = piecesOf(data, problems);
  if (problems.any) return invalid(what, problems.fields);
  // Not a supply (a gift card sold, a donation): no part of the VAT transaction, unless mapped to 0%.
  const { taxable, zeroRated, left } = withoutNonTaxable(all, settings.rate_types);
  if (left.length > 0) notes.push(`${left.join(', ')} left out: not a taxable supply (taxable: false)`);
  const lines = taxable.filter((p) => !p.shipping);
  if (lines.length === 0 && zeroRated.length === 0) return ignore(`${what}: no taxable supply (every line is taxable: false)`);
  // Shipping follows the goods: with only 0% lines left, it follows them.
  const pieces = lines.length === 0 ? [...zeroRated, ...taxable.map((p) => ({ ...p, rate: ZERO }))] : taxable;
  if (lines.length > 0) assignRates(data, pieces, supply, settings, problems, notes);
  if (problems.any) return invalid(what, problems.fields);
  if (lines.length > 0) pieces.push(...zeroRated);

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
  for (const body of bodies) {
    const checked = checkBody(body, { today: ctx.today, knownTypeIds, tolerance: settings.tolerance });
    if (!checked.ok) return invalid(what, labelled(checked.fields, split ? `${body.invoice_number}: ` : ''));
    out.push(checked.body);
  }
  return { kind: 'send', body: out, ...(notes.length === 0 ? {} : { notes }) };
}

/**
 * The one validation of a body before it may be sent: the request schema field by field and every
 * rule of the service but 7 (src/mapping/vat-validation.ts). Its value is the body as parsed, in
 * the schema's field order: the bytes the ledger records are the bytes sent.
 */
export function checkBody(
  body: VatTransactionRequest,
  options: { today: string; knownTypeIds: ReadonlySet<string>; tolerance: string },
): { ok: true; body: VatTransactionRequest } | { ok: false; fields: FieldErrors } {
  const check = checkVatTransaction(body, options);
  if (Object.keys(check.errors).length > 0) return { ok: false, fields: check.errors };
  return { ok: true, body: check.value as VatTransactionRequest };
}

/** Field errors of one part of a split keep the service's field names; the message names the part. */
function labelled(fields: FieldErrors, label: string): FieldErrors {
  if (label === '') return fields;
  return Object.fromEntries(Object.entries(fields).map(([field, messages]) => [field, messages.map((m) => `${label}${m}`)]));
}
