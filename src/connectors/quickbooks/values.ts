import type { Address } from '../../domain/events.js';
import { countryCode } from '../shared/countries.js';
import { compact, nonBlank, nonEmpty } from '../shared/fields.js';
import { QUICKBOOKS_ID_PREFIXES } from './config.js';
import type { QboAddress, QboEntityName, QboSalesTransaction } from './schemas.js';

/**
 * QuickBooks values as canonical ones, shared by map.ts and lines.ts: record keys, event ids and
 * versions, addresses, voids. PURE.
 */

export const CONNECTOR_ID = 'quickbooks';

/** The entities whose records taxsync keeps (a Payment only links a credit memo to an invoice). */
export type QboRecordEntity = Exclude<QboEntityName, 'Payment'>;

/** The record's external id: the entity's prefix (config.ts says why) and QBO's Id. */
export function externalIdOf(entity: QboRecordEntity, id: string): string {
  return `${QUICKBOOKS_ID_PREFIXES[entity]}${id}`;
}

/**
 * One id per state of a record: entity, Id, the change time in milliseconds and the SyncToken.
 * LastUpdatedTime has one-second resolution, so two changes within a second (a void made right
 * after an update by an integration) share it; the SyncToken, raised by every change, keeps them
 * two events instead of one being dropped as a duplicate. A deletion has no SyncToken left.
 */
export function eventIdOf(entity: QboEntityName, id: string, at: string, syncToken: string): string {
  return `${CONNECTOR_ID}:${entity.toLowerCase()}:${id}:${Date.parse(at)}:${syncToken}`;
}

/** The SyncToken as the event's version (it orders a record's states before their times do). */
export function versionOf(syncToken: string | null | undefined): number | undefined {
  if (syncToken === null || syncToken === undefined || !/^\d{1,15}$/.test(syncToken)) return undefined;
  return Number(syncToken);
}

/**
 * The document date: TxnDate is the company's local date without a time, written as midnight UTC
 * of that date (as the other accounting connectors do), so the date a tax engine reads in UTC is
 * the one on the document. Without one, the creation time.
 */
export function issuedAtOf(doc: Pick<QboSalesTransaction, 'TxnDate' | 'MetaData'>): string {
  if (doc.TxnDate) return `${doc.TxnDate}T00:00:00Z`;
  return doc.MetaData.CreateTime ?? doc.MetaData.LastUpdatedTime;
}

/**
 * A void: QBO keeps the document, zeroes every amount and quantity and injects "Voided" into
 * PrivateNote (API reference, "Void an invoice"). Zero amounts alone are a free document, and the
 * word alone a note someone typed, so both are needed.
 */
export function isVoided(doc: QboSalesTransaction): boolean {
  const note = doc.PrivateNote ?? '';
  if (!/\bVoided\b/.test(note)) return false;
  const zero = (amount: { isZero(): boolean } | null | undefined) => amount === null || amount === undefined || amount.isZero();
  return zero(doc.TotalAmt) && (doc.Line ?? []).every((line) => zero(line.Amount));
}

// ——— addresses ———

/** "Middlefield, CA 94303": the last line of a free-form US address (two spaces happen). */
const CITY_STATE_ZIP = /^(.+?),?\s+([A-Z]{2})\s+(\d{5}(?:-\d{4})?)$/;

/**
 * A QBO address as the canonical one. Structured addresses have their street in Line1..Line5.
 * Free-form ones (no City, no PostalCode) hold the name and company in the first lines and
 * "City, ST ZIP" in the last: that line gives city, state and zip, the line before it the street.
 * A missing Country is the company's own (QBO leaves it out of domestic addresses); a given one is
 * free text ("USA", "Australia", "AU"), read with the shared countryCode.
 */
export function addressOf(a: QboAddress | null | undefined, companyCountry: string | undefined): Address | undefined {
  if (!a) return undefined;
  const lines = [a.Line1, a.Line2, a.Line3, a.Line4, a.Line5].map(nonBlank).filter((l): l is string => l !== undefined);
  const country = nonBlank(a.Country) === undefined ? companyCountry : countryCode(a.Country);
  let out: Address;
  const last = lines.length > 0 ? CITY_STATE_ZIP.exec(lines[lines.length - 1]!) : null;
  if (nonBlank(a.City) === undefined && nonBlank(a.PostalCode) === undefined && last !== null) {
    out = compact<Address>({ street: lines.length > 1 ? lines[lines.length - 2] : undefined, city: last[1], state: last[2], zip: last[3], country });
  } else {
    out = compact<Address>({
      street: lines.length > 0 ? lines.join(', ') : undefined,
      city: nonBlank(a.City),
      state: nonBlank(a.CountrySubDivisionCode),
      zip: nonBlank(a.PostalCode),
      country,
    });
  }
  return Object.keys(out).some((k) => k !== 'country') ? out : undefined;
}

export function addressesOf(
  bill: QboAddress | null | undefined,
  ship: QboAddress | null | undefined,
  companyCountry: string | undefined,
): { billing?: Address; shipping?: Address } | undefined {
  return nonEmpty(compact({ billing: addressOf(bill, companyCountry), shipping: addressOf(ship, companyCountry) }));
}
