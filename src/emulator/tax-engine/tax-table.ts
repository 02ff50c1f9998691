/**
 * The emulator's deterministic US sales-tax table (docs/emulator.md, "Tax table"). Rates are
 * decimal fractions as strings; a locality is found by ZIP code, else by city name within the
 * state. Invented but plausible: it exists to make calculations checkable by hand.
 */

export const JURISDICTION_LEVELS = ['state', 'county', 'city', 'mta', 'spd'] as const;
export type JurisdictionLevel = (typeof JURISDICTION_LEVELS)[number];

export interface JurisdictionRate {
  level: JurisdictionLevel;
  name: string;
  /** Decimal fraction, "0.0725". */
  rate: string;
}

export interface Locality {
  city: string;
  zips: readonly string[];
  latitude: string;
  longitude: string;
  /** Local levels; the state level comes from the state. */
  rates: readonly JurisdictionRate[];
}

export interface StateEntry {
  code: string;
  name: string;
  /** false: the economic-nexus threshold is not reached, so tax is not collected unless override_threshold. */
  nexus: boolean;
  rate: string;
  latitude: string;
  longitude: string;
  /** Tax codes that are product-exempt in this state. */
  exemptTaxCodes: readonly string[];
  localities: readonly Locality[];
}

export interface ProductRule {
  tangible: boolean;
}

export interface TaxTable {
  country: string;
  states: Readonly<Record<string, StateEntry>>;
  /** Known tax codes; an unknown or absent code is `general`. */
  products: Readonly<Record<string, ProductRule>>;
}

export const DEFAULT_TAX_TABLE: TaxTable = {
  country: 'US',
  products: {
    general: { tangible: true },
    clothing: { tangible: true },
    grocery: { tangible: true },
    digital: { tangible: false },
    saas: { tangible: false },
    exempt: { tangible: true },
    shipping: { tangible: true },
  },
  states: {
    CA: {
      code: 'CA',
      name: 'California',
      nexus: true,
      rate: '0.0725',
      latitude: '36.7783',
      longitude: '-119.4179',
      exemptTaxCodes: ['grocery', 'digital', 'saas', 'exempt', 'shipping'],
      localities: [
        {
          city: 'Los Angeles',
          zips: ['90012', '90015', '90017'],
          latitude: '34.0522',
          longitude: '-118.2437',
          rates: [
            { level: 'county', name: 'Los Angeles County', rate: '0.0025' },
            { level: 'spd', name: 'Los Angeles County District Taxes', rate: '0.02' },
          ],
        },
        {
          city: 'San Francisco',
          zips: ['94103', '94105'],
          latitude: '37.7749',
          longitude: '-122.4194',
          rates: [
            { level: 'county', name: 'San Francisco County', rate: '0.0025' },
            { level: 'spd', name: 'San Francisco District Taxes', rate: '0.01375' },
          ],
        },
      ],
    },
    NY: {
      code: 'NY',
      name: 'New York',
      nexus: true,
      rate: '0.04',
      latitude: '42.1657',
      longitude: '-74.9481',
      exemptTaxCodes: ['grocery', 'exempt'],
      localities: [
        {
          city: 'New York',
          zips: ['10001', '10007', '10013'],
          latitude: '40.7128',
          longitude: '-74.0060',
          rates: [
            { level: 'city', name: 'New York City', rate: '0.045' },
            { level: 'mta', name: 'Metropolitan Commuter Transportation District', rate: '0.00375' },
          ],
        },
        {
          city: 'Albany',
          zips: ['12207'],
          latitude: '42.6526',
          longitude: '-73.7562',
          rates: [{ level: 'county', name: 'Albany County', rate: '0.04' }],
        },
      ],
    },
    TX: {
      code: 'TX',
      name: 'Texas',
      nexus: true,
      rate: '0.0625',
      latitude: '31.9686',
      longitude: '-99.9018',
      exemptTaxCodes: ['grocery', 'exempt'],
      localities: [
        {
          city: 'Austin',
          zips: ['78701', '78702'],
          latitude: '30.2672',
          longitude: '-97.7431',
          rates: [
            { level: 'city', name: 'Austin', rate: '0.01' },
            { level: 'mta', name: 'Capital Metro Transit Authority', rate: '0.01' },
          ],
        },
        {
          city: 'Houston',
          zips: ['77002'],
          latitude: '29.7604',
          longitude: '-95.3698',
          rates: [
            { level: 'city', name: 'Houston', rate: '0.01' },
            { level: 'mta', name: 'Houston Metro Transit Authority', rate: '0.01' },
          ],
        },
      ],
    },
    WA: {
      code: 'WA',
      name: 'Washington',
      nexus: false,
      rate: '0.065',
      latitude: '47.7511',
      longitude: '-120.7401',
      exemptTaxCodes: ['grocery', 'exempt'],
      localities: [
        {
          city: 'Seattle',
          zips: ['98101', '98104'],
          latitude: '47.6062',
          longitude: '-122.3321',
          rates: [
            { level: 'city', name: 'Seattle', rate: '0.0245' },
            { level: 'spd', name: 'Sound Transit Regional Transit Authority', rate: '0.014' },
          ],
        },
      ],
    },
  },
};

export function productRule(table: TaxTable, taxCode: string | undefined): ProductRule {
  return table.products[normaliseTaxCode(taxCode)] ?? table.products.general ?? { tangible: true };
}

export function normaliseTaxCode(taxCode: string | undefined): string {
  return (taxCode ?? 'general').trim().toLowerCase() || 'general';
}

export function isProductExempt(state: StateEntry, taxCode: string | undefined): boolean {
  return state.exemptTaxCodes.includes(normaliseTaxCode(taxCode));
}

/** The rates that apply at a location: the state level, then the locality's levels. */
export function ratesAt(state: StateEntry, locality: Locality | undefined): JurisdictionRate[] {
  return [{ level: 'state', name: state.name, rate: state.rate }, ...(locality?.rates ?? [])];
}
