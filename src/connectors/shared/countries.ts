import { ISO_COUNTRIES } from '../../domain/reference/countries.js';
import { nonBlank } from './fields.js';

/**
 * Free-text country names, as accounting platforms keep them (Xero's and QuickBooks' address
 * Country), read as ISO 3166-1 alpha-2 codes. PURE: Intl is the only outside knowledge used, and
 * it is data, not I/O.
 */

/**
 * Names people type that ICU's English names do not match: older or everyday names, and the
 * three-letter codes (ISO 3166-1 alpha-3) QuickBooks users write.
 */
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
  can: 'CA',
  aus: 'AU',
  nzl: 'NZ',
  gbr: 'GB',
  ind: 'IN',
  irl: 'IE',
  fra: 'FR',
  deu: 'DE',
};

/**
 * One spelling per name: lowercase, accents and punctuation dropped, "&" as "and", "Saint" as
 * "St", spaces collapsed ("Côte d’Ivoire" → "cote divoire", "Saint Kitts & Nevis" → "st kitts and
 * nevis", "U.S.A." → "usa").
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
 * Every ISO 3166-1 code (ISO_COUNTRIES, so no grouping such as EU, no user-assigned code such as
 * ZZ or XK, no withdrawn one) by itself and by its English name from ICU (Node ships full ICU),
 * plus the aliases above. "Myanmar (Burma)" is also found as "Myanmar".
 */
const BY_NAME: ReadonlyMap<string, string> = (() => {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const out = new Map<string, string>();
  for (const code of ISO_COUNTRIES) {
    out.set(code.toLowerCase(), code);
    const name = names.of(code);
    if (name === undefined) continue;
    out.set(fold(name), code);
    if (name.includes('(')) out.set(fold(name.replace(/\s*\(.*\)/, '')), code);
  }
  for (const [alias, code] of Object.entries(ALIASES)) out.set(alias, code);
  return out;
})();

/**
 * A free-text Country ("New Zealand", "NZ", "United States", "USA") as an ISO 3166-1 alpha-2
 * code, or undefined when it names no country taxsync recognises: the canonical address then has
 * no country (the other fields are kept) rather than a wrong one.
 */
export function countryCode(text: string | null | undefined): string | undefined {
  const given = nonBlank(text);
  return given === undefined ? undefined : BY_NAME.get(fold(given));
}
