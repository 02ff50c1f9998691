import type { Address } from '../../domain/events.js';
import { compact, nonBlank } from '../shared/fields.js';
import type { XeroAddress, XeroContact, XeroInvoiceAddress } from './schemas.js';

/**
 * Xero's addresses and contacts as canonical ones, for map.ts. PURE: Intl is the only outside
 * knowledge used, and it is data, not I/O.
 */

/**
 * Region codes ICU names that are not current ISO 3166-1 countries: groupings and user-assigned
 * codes, reserved ones (IC Canary Islands, UK for GB…), and withdrawn ones, which ICU still names
 * after their successors (DD "Germany" beside DE, AN "Curaçao" beside CW).
 */
const NOT_COUNTRIES = new Set(
  ['EU EZ QO UN XA XB XK ZZ', 'AC CP CQ DG EA IC TA UK', 'AN BU CS DD DY FX HV NH RH SU TP VD YD YU ZR'].join(' ').split(' '),
);

/** Names people type that ICU's English names do not match (older or everyday names). */
const ALIASES: Readonly<Record<string, string>> = {
  usa: 'US',
  'united states of america': 'US',
  uk: 'GB',
  'great britain': 'GB',
  britain: 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  turkey: 'TR',
  'czech republic': 'CZ',
  'hong kong': 'HK',
  macau: 'MO',
  macao: 'MO',
  korea: 'KR',
  'republic of korea': 'KR',
  russia: 'RU',
  'russian federation': 'RU',
  vietnam: 'VN',
  'ivory coast': 'CI',
  swaziland: 'SZ',
  macedonia: 'MK',
  holland: 'NL',
  'the netherlands': 'NL',
  'east timor': 'TL',
  'democratic republic of the congo': 'CD',
  'dr congo': 'CD',
  congo: 'CG',
  'republic of the congo': 'CG',
};

/**
 * One spelling per name: lowercase, accents and punctuation dropped, "&" as "and", "Saint" as
 * "St", spaces collapsed ("Côte d’Ivoire" → "cote divoire", "Saint Kitts & Nevis" → "st kitts and nevis").
 */
function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[.'’()]/g, '')
    .replace(/[\s,-]+/g, ' ')
    .replace(/\bsaint\b/g, 'st')
    .trim();
}

/**
 * English country names and the codes themselves → ISO 3166-1 alpha-2, from ICU's region names
 * (Node ships full ICU), plus the aliases above. "Myanmar (Burma)" is also found as "Myanmar".
 */
const BY_NAME: ReadonlyMap<string, string> = (() => {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const out = new Map<string, string>();
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      const name = NOT_COUNTRIES.has(code) ? undefined : names.of(code);
      if (name === undefined) continue;
      out.set(code.toLowerCase(), code);
      out.set(fold(name), code);
      if (name.includes('(')) out.set(fold(name.replace(/\s*\(.*\)/, '')), code);
    }
  }
  for (const [alias, code] of Object.entries(ALIASES)) out.set(alias, code);
  return out;
})();

/**
 * Xero's free-text Country ("New Zealand", "NZ", "United States") as an ISO 3166-1 alpha-2 code,
 * or undefined when it names no country taxsync recognises: the canonical address then has no
 * country (the other fields are kept) rather than a wrong one.
 */
export function countryCode(text: string | null | undefined): string | undefined {
  const given = nonBlank(text);
  return given === undefined ? undefined : BY_NAME.get(fold(given));
}

/** A Xero address as a canonical one: AddressLine1–4 joined into street; undefined when empty. */
export function address(a: XeroAddress | XeroInvoiceAddress | undefined): Address | undefined {
  if (a === undefined) return undefined;
  const lines = [a.AddressLine1, a.AddressLine2, a.AddressLine3, a.AddressLine4].map(nonBlank).filter((l) => l !== undefined);
  const out = compact<Address>({
    street: lines.length > 0 ? lines.join(', ') : undefined,
    city: nonBlank(a.City),
    state: nonBlank(a.Region),
    zip: nonBlank(a.PostalCode),
    country: countryCode(a.Country),
  });
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * A contact's addresses: POBOX (Xero's postal address, the one invoices are sent to) is billing;
 * STREET (the physical address, where goods go) is shipping. Undefined when neither has content.
 */
export function contactAddresses(contact: XeroContact): { billing?: Address; shipping?: Address } | undefined {
  const of = (type: string) => address(contact.Addresses.find((a) => a.AddressType?.toUpperCase() === type));
  const out = compact({ billing: of('POBOX'), shipping: of('STREET') });
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Name, else "FirstName LastName". */
export function contactName(contact: XeroContact): string | undefined {
  const parts = [nonBlank(contact.FirstName), nonBlank(contact.LastName)].filter((p) => p !== undefined);
  return nonBlank(contact.Name) ?? (parts.length > 0 ? parts.join(' ') : undefined);
}
