import { EU_STATES } from '../contract/iso-3166.js';
import type { RegistrationKind } from '../contract/vat-requests.js';

/**
 * Reference data of the VAT emulation: transaction types, jurisdictions and the registration
 * combinations configured by default. The ISO lists, the EU member states and the VAT number
 * formats are the emulator's own reading (../contract/).
 */

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
export const DEFAULT_REGISTRATION_COMBINATIONS: Readonly<Record<string, readonly RegistrationKind[]>> = Object.fromEntries(
  Object.keys(NAMES).map((iso): [string, RegistrationKind[]] => [
    iso,
    iso.startsWith('US-')
      ? ['sales_tax_registration']
      : EU_STATES.has(iso)
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
