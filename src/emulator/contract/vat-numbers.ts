/**
 * VAT rule 4, "vat_number matches the format of the partner country", as the emulator reads it:
 * the national formats published for the EU's VIES service, plus the United Kingdom, Switzerland
 * and Norway (docs/decisions.md: other countries' numbers are not checked). The country prefix is
 * optional (Greece's is EL); spaces, dots and hyphens are ignored.
 */
interface NationalFormat {
  prefix: string;
  /** The part after the prefix. */
  body: RegExp;
  sample: string;
}

const d = (n: number | string) => `\\d{${n}}`;
const format = (prefix: string, body: string, sample: string): NationalFormat => ({ prefix, body: new RegExp(`^(?:${body})$`), sample });

const FORMATS: Readonly<Record<string, NationalFormat>> = {
  AT: format('AT', `U${d(8)}`, 'ATU99999999'),
  BE: format('BE', `[01]${d(9)}`, 'BE0999999999'),
  BG: format('BG', d('9,10'), 'BG999999999'),
  CY: format('CY', `${d(8)}[A-Z]`, 'CY99999999L'),
  CZ: format('CZ', d('8,10'), 'CZ99999999'),
  DE: format('DE', d(9), 'DE999999999'),
  DK: format('DK', d(8), 'DK99999999'),
  EE: format('EE', d(9), 'EE999999999'),
  // First and last may each be a letter or a digit, but not both digits.
  ES: format('ES', `[A-Z]${d(7)}[0-9A-Z]|${d(8)}[A-Z]`, 'ESX9999999X'),
  FI: format('FI', d(8), 'FI99999999'),
  FR: format('FR', `[0-9A-HJ-NP-Z]{2}${d(9)}`, 'FRXX999999999'),
  GR: format('EL', d(9), 'EL999999999'),
  HR: format('HR', d(11), 'HR99999999999'),
  HU: format('HU', d(8), 'HU99999999'),
  IE: format('IE', `${d(7)}[A-W][A-IW]?|\\d[A-Z+*]${d(5)}[A-W]`, 'IE9999999WI'),
  IT: format('IT', d(11), 'IT99999999999'),
  LT: format('LT', `${d(9)}|${d(12)}`, 'LT999999999'),
  LU: format('LU', d(8), 'LU99999999'),
  LV: format('LV', d(11), 'LV99999999999'),
  MT: format('MT', d(8), 'MT99999999'),
  NL: format('NL', `${d(9)}B${d(2)}`, 'NL999999999B99'),
  PL: format('PL', d(10), 'PL9999999999'),
  PT: format('PT', d(9), 'PT999999999'),
  RO: format('RO', d('2,10'), 'RO999999999'),
  SE: format('SE', `${d(10)}01`, 'SE999999999901'),
  SI: format('SI', d(8), 'SI99999999'),
  SK: format('SK', d(10), 'SK9999999999'),
  GB: format('GB', `${d(9)}|${d(12)}|GD[0-4]${d(2)}|HA[5-9]${d(2)}`, 'GB999999999'),
  CH: format('CHE', `${d(9)}(?:MWST|TVA|IVA)?`, 'CHE-999.999.999 MWST'),
  NO: format('NO', `${d(9)}(?:MVA)?`, 'NO999999999MVA'),
};

/** A number of the country's format, for messages and tests. */
export const vatNumberSample = (country: string): string | undefined => FORMATS[country]?.sample;

/** Countries whose numbers rule 4 checks. */
export const VAT_NUMBER_COUNTRIES: readonly string[] = Object.keys(FORMATS);

/** The finding of rule 4 for `number` of a partner in `country`; undefined when it fits or is not checked. */
export function vatNumberFinding(number: string, country: string): string | undefined {
  const own = FORMATS[country];
  if (own === undefined) return undefined;
  const compact = number.toUpperCase().replace(/[\s.-]+/g, '');
  const fits = (f: NationalFormat) => f.body.test(compact) || (compact.startsWith(f.prefix) && f.body.test(compact.slice(f.prefix.length)));
  if (fits(own)) return undefined;
  const other = Object.entries(FORMATS).find(([code, f]) => code !== country && compact.startsWith(f.prefix) && f.body.test(compact.slice(f.prefix.length)));
  if (other !== undefined) return `${number} is written as a ${other[0]} VAT number, but partner_country is ${country}`;
  return `${number} does not match the ${country} VAT number format (such as ${own.sample})`;
}
