import type { InvoiceData } from '../../domain/events.js';
import { EU_MEMBERS } from '../../domain/reference/countries.js';
import { vatEnabled, type SubmitWhen, type VatRegistration, type VatScheme, type VatSettings } from '../vat-settings.js';

/**
 * Which invoices are VAT's business, and where their VAT belongs (docs/vat.md, "Which invoices",
 * "Which registration covers a supply"). PURE.
 */

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
export interface Parties {
  addresses?: InvoiceData['addresses'];
  customer?: InvoiceData['customer'];
  vat?: InvoiceData['vat'];
}

export const KIND_LABEL: Readonly<Record<SupplyKind, string>> = { domestic: 'domestic', intra_eu: 'intra-EU', distance_sale: 'distance', export: 'export' };

export const present = (value: string | undefined): string | undefined => {
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
