import type { RegistrationType } from '../../api/schemas/index.js';

/**
 * Reference data of the VAT emulation: ISO lists, VAT number formats, transaction types,
 * jurisdictions and the registration combinations configured by default.
 */

/** ISO 3166-1 alpha-2, all 249 officially assigned codes. */
export const ISO_COUNTRIES: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** ISO 4217 currency codes in use (funds and precious metals left out; BGN kept for older invoices). */
export const ISO_CURRENCIES: ReadonlySet<string> = new Set(
  (
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE ' +
    'CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ ' +
    'GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL ' +
    'LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR ' +
    'PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY ' +
    'TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

export const EU_MEMBERS: ReadonlySet<string> = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);

interface VatFormat {
  /** The prefix written before the national number (Greece uses EL). */
  prefix: string;
  /** The national part, after the prefix, spaces, dots and hyphens removed. */
  pattern: RegExp;
  example: string;
}

/** VAT number formats of every EU member state plus GB, CH and NO. */
export const VAT_FORMATS: Readonly<Record<string, VatFormat>> = {
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

/**
 * undefined when `vatNumber` fits the partner country's format (or the country has no format in
 * the table), else the reason. The country prefix is optional; spaces, dots and hyphens are ignored.
 */
export function vatNumberProblem(vatNumber: string, country: string): string | undefined {
  const format = VAT_FORMATS[country];
  if (format === undefined) return undefined;
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

export interface VatTransactionTypeInfo {
  id: string;
  name: string;
  description: string;
  /** Sales count as output VAT; purchases (reverse charge) as VAT due and reclaimable at once. */
  direction: 'sales' | 'purchases';
  /** Business partner expected: a missing vat_number is a compliance warning. */
  b2b: boolean;
  intraEu: boolean;
}

/** Stable ids, the same in every run and every emulator. */
export const VAT_TRANSACTION_TYPES: readonly VatTransactionTypeInfo[] = [
  {
    id: 'b2b5a1e5-0000-4000-8000-000000000001',
    name: 'B2B Sales',
    description: 'Domestic sales to businesses',
    direction: 'sales',
    b2b: true,
    intraEu: false,
  },
  {
    id: 'b2c5a1e5-0000-4000-8000-000000000002',
    name: 'B2C Sales',
    description: 'Sales to consumers',
    direction: 'sales',
    b2b: false,
    intraEu: false,
  },
  {
    id: 'e0e5a1e5-0000-4000-8000-000000000003',
    name: 'Intra-EU Supplies',
    description: 'Zero-rated supplies of goods to businesses in another EU member state',
    direction: 'sales',
    b2b: true,
    intraEu: true,
  },
  {
    id: '1a905e1c-0000-4000-8000-000000000004',
    name: 'Import Services',
    description: 'Services bought from abroad under the reverse charge',
    direction: 'purchases',
    b2b: true,
    intraEu: false,
  },
  {
    id: 'e4905a1e-0000-4000-8000-000000000005',
    name: 'Exports',
    description: 'Zero-rated exports of goods outside the EU',
    direction: 'sales',
    b2b: false,
    intraEu: false,
  },
];

export interface JurisdictionInfo {
  iso: string;
  name: string;
  /** Currency of its returns. */
  currency: string;
}

const EURO = 'AT BE BG CY DE EE ES FI FR GR HR IE IT LT LU LV MT NL PT SI SK'.split(' ');
const NAMES: Record<string, string> = {
  AT: 'Austria', BE: 'Belgium', BG: 'Bulgaria', CY: 'Cyprus', CZ: 'Czechia', DE: 'Germany', DK: 'Denmark',
  EE: 'Estonia', ES: 'Spain', FI: 'Finland', FR: 'France', GR: 'Greece', HR: 'Croatia', HU: 'Hungary',
  IE: 'Ireland', IT: 'Italy', LT: 'Lithuania', LU: 'Luxembourg', LV: 'Latvia', MT: 'Malta', NL: 'Netherlands',
  PL: 'Poland', PT: 'Portugal', RO: 'Romania', SE: 'Sweden', SI: 'Slovenia', SK: 'Slovakia',
  GB: 'United Kingdom', CH: 'Switzerland', NO: 'Norway',
  'US-CA': 'California', 'US-NY': 'New York', 'US-TX': 'Texas', 'US-WA': 'Washington',
};
const CURRENCIES: Record<string, string> = {
  CZ: 'CZK', DK: 'DKK', HU: 'HUF', PL: 'PLN', RO: 'RON', SE: 'SEK', GB: 'GBP', CH: 'CHF', NO: 'NOK',
};

/** The taxable jurisdictions the emulator knows: EU member states, GB, CH, NO and four US states. */
export const JURISDICTIONS: Readonly<Record<string, JurisdictionInfo>> = Object.fromEntries(
  Object.entries(NAMES).map(([iso, name]) => [
    iso,
    { iso, name, currency: iso.startsWith('US-') ? 'USD' : EURO.includes(iso) ? 'EUR' : (CURRENCIES[iso] ?? 'EUR') },
  ]),
);

/** Registration types configured per taxable jurisdiction unless the emulator is told otherwise. */
export const DEFAULT_REGISTRATION_COMBINATIONS: Readonly<Record<string, readonly RegistrationType[]>> = Object.fromEntries(
  Object.keys(NAMES).map((iso): [string, RegistrationType[]] => [
    iso,
    iso.startsWith('US-')
      ? ['sales_tax_registration']
      : EU_MEMBERS.has(iso)
        ? ['standard', 'one_stop_shop', 'import_one_stop_shop']
        : ['standard'],
  ]),
);

const DISPLAY_OVERRIDES: Record<string, string> = {
  one_stop_shop: 'One Stop Shop (OSS)',
  import_one_stop_shop: 'Import One Stop Shop (IOSS)',
  mini_one_stop_shop: 'Mini One Stop Shop (MOSS)',
  suts_registration: 'SUTS registration',
  arsstc_registration: 'ARSSTC registration',
};

/** "client_manual_payment" → "Client manual payment". */
export function displayOf(value: string): string {
  const override = DISPLAY_OVERRIDES[value];
  if (override !== undefined) return override;
  const words = value.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
