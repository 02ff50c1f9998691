/**
 * VAT number formats (rule 4 of vat-compliance-api.md): every EU member state plus GB, CH and NO.
 * The one copy taxsync's local VAT validation and the emulator share.
 */

export interface VatNumberFormat {
  /** The prefix written before the national number (Greece uses EL). */
  prefix: string;
  /** The national part, after the prefix, spaces, dots and hyphens removed. */
  pattern: RegExp;
  example: string;
}

/** VAT number formats of every EU member state plus GB, CH and NO, keyed by ISO 3166-1 alpha-2. */
export const VAT_FORMATS: Readonly<Record<string, VatNumberFormat>> = {
  AT: { prefix: 'AT', pattern: /^U\d{8}$/, example: 'ATU12345678' },
  BE: { prefix: 'BE', pattern: /^[01]\d{9}$/, example: 'BE0123456789' },
  BG: { prefix: 'BG', pattern: /^\d{9,10}$/, example: 'BG123456789' },
  CY: { prefix: 'CY', pattern: /^\d{8}[A-Z]$/, example: 'CY12345678X' },
  CZ: { prefix: 'CZ', pattern: /^\d{8,10}$/, example: 'CZ12345678' },
  DE: { prefix: 'DE', pattern: /^\d{9}$/, example: 'DE123456789' },
  DK: { prefix: 'DK', pattern: /^\d{8}$/, example: 'DK12345678' },
  EE: { prefix: 'EE', pattern: /^\d{9}$/, example: 'EE123456789' },
  ES: { prefix: 'ES', pattern: /^([A-Z]\d{7}[A-Z0-9]|\d{8}[A-Z])$/, example: 'ESB12345678' },
  FI: { prefix: 'FI', pattern: /^\d{8}$/, example: 'FI12345678' },
  FR: { prefix: 'FR', pattern: /^[0-9A-HJ-NP-Z]{2}\d{9}$/, example: 'FR12345678901' },
  GR: { prefix: 'EL', pattern: /^\d{9}$/, example: 'EL123456789' },
  HR: { prefix: 'HR', pattern: /^\d{11}$/, example: 'HR12345678901' },
  HU: { prefix: 'HU', pattern: /^\d{8}$/, example: 'HU12345678' },
  IE: { prefix: 'IE', pattern: /^(\d{7}[A-W][A-IW]?|\d[A-Z+*]\d{5}[A-W])$/, example: 'IE1234567T' },
  IT: { prefix: 'IT', pattern: /^\d{11}$/, example: 'IT12345678901' },
  LT: { prefix: 'LT', pattern: /^(\d{9}|\d{12})$/, example: 'LT123456789' },
  LU: { prefix: 'LU', pattern: /^\d{8}$/, example: 'LU12345678' },
  LV: { prefix: 'LV', pattern: /^\d{11}$/, example: 'LV12345678901' },
  MT: { prefix: 'MT', pattern: /^\d{8}$/, example: 'MT12345678' },
  NL: { prefix: 'NL', pattern: /^\d{9}B\d{2}$/, example: 'NL123456789B01' },
  PL: { prefix: 'PL', pattern: /^\d{10}$/, example: 'PL1234567890' },
  PT: { prefix: 'PT', pattern: /^\d{9}$/, example: 'PT123456789' },
  RO: { prefix: 'RO', pattern: /^[1-9]\d{1,9}$/, example: 'RO1234567890' },
  SE: { prefix: 'SE', pattern: /^\d{10}01$/, example: 'SE123456789001' },
  SI: { prefix: 'SI', pattern: /^\d{8}$/, example: 'SI12345678' },
  SK: { prefix: 'SK', pattern: /^\d{10}$/, example: 'SK1234567890' },
  GB: { prefix: 'GB', pattern: /^(\d{9}|\d{12}|GD[0-4]\d{2}|HA[5-9]\d{2})$/, example: 'GB123456789' },
  CH: { prefix: 'CH', pattern: /^E\d{9}(MWST|TVA|IVA)?$/, example: 'CHE123456789MWST' },
  NO: { prefix: 'NO', pattern: /^\d{9}(MVA)?$/, example: 'NO123456789MVA' },
};

/** Whether rule 4 checks numbers of this country (other countries' numbers pass unchecked). */
export const hasVatNumberFormat = (country: string): boolean => Object.hasOwn(VAT_FORMATS, country);

/**
 * undefined when `vatNumber` fits the partner country's format (or the country has no format in
 * the table), else the reason. The country prefix is optional; spaces, dots and hyphens are ignored.
 */
export function vatNumberProblem(vatNumber: string, country: string): string | undefined {
  if (!hasVatNumberFormat(country)) return undefined;
  const format = VAT_FORMATS[country] as VatNumberFormat;
  const compact = vatNumber.toUpperCase().replace(/[\s.-]/g, '');
  const national = compact.startsWith(format.prefix) && !format.pattern.test(compact) ? compact.slice(format.prefix.length) : compact;
  if (format.pattern.test(national)) return undefined;
  const otherPrefix = Object.entries(VAT_FORMATS).find(
    ([code, f]) => code !== country && compact.startsWith(f.prefix) && f.pattern.test(compact.slice(f.prefix.length)),
  );
  if (otherPrefix !== undefined) {
    return `${vatNumber} is a ${otherPrefix[0]} VAT number, but partner_country is ${country}`;
  }
  return `${vatNumber} does not match the ${country} VAT number format (for example ${format.example})`;
}
