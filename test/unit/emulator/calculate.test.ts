import { describe, expect, it } from 'vitest';
import { Dec as Money } from '../../../src/emulator/contract/decimal.js';
import { DEFAULT_TAX_TABLE } from '../../../src/emulator/index.js';
import { allocate, calculate, type CalcInput, type CalcResult } from '../../../src/emulator/tax-engine/calculate.js';
import { exemptionApplies } from '../../../src/emulator/tax-engine/exemptions.js';
import type { ExemptionRecord } from '../../../src/emulator/state.js';
import { geocode } from '../../../src/emulator/tax-engine/geocode.js';
import { LA, NYC } from './helpers.js';

const at = (address: Parameters<typeof geocode>[0]) => geocode(address, DEFAULT_TAX_TABLE).location;

function calc(input: Partial<CalcInput>): CalcResult {
  const outcome = calculate({ currency: 'USD', isTaxInclusive: false, items: [], location: at(NYC), overrideThreshold: false, table: DEFAULT_TAX_TABLE, ...input });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.fields));
  return outcome.result;
}

const taxOf = (result: CalcResult) => result.tax.total_tax;
const d = (values: string[]) => values.map((v) => new Money(v));

describe('allocate (pro rata with the remainder on the largest share)', () => {
  it('splits so the shares always sum to the total exactly', () => {
    expect(allocate(new Money('10'), d(['100', '50']), 2).map(String)).toEqual(['6.67', '3.33']);
    expect(allocate(new Money('100'), d(['1', '1', '1']), 2).map(String)).toEqual(['33.34', '33.33', '33.33']);
    expect(allocate(new Money('0.01'), d(['1', '1', '1']), 2).map(String)).toEqual(['0.01', '0', '0']);
    // Half-cent shares round up, so the remainder is negative and comes off the largest (first on a tie).
    expect(allocate(new Money('0.05'), d(['1', '1']), 2).map(String)).toEqual(['0.02', '0.03']);
    expect(allocate(new Money('7'), d(['1', '2']), 0).map(String)).toEqual(['2', '5']);
    expect(allocate(new Money('5'), d(['0', '0']), 2).map(String)).toEqual(['0', '0']);
  });
});

describe('calculate: discounts and amounts', () => {
  it('distributes the transaction-level discount pro rata over the items, to the cent', () => {
    const result = calc({
      items: [
        { unit_price: '19.99', quantity: '3', discount: '5.00' },
        { unit_price: '10.00', quantity: '2' },
        { unit_price: '0.333', quantity: '3' },
      ],
      transactionLevelDiscount: '3.33',
    });
    // Bases after item discounts: 54.97, 20.00, 1.00 (0.999 rounds to 1.00); sum 75.97.
    expect(result.items.map((i) => i.total_price)).toEqual(['59.97', '20.00', '1.00']);
    expect(result.items.map((i) => i.relative_transaction_discount)).toEqual(['2.41', '0.88', '0.04']);
    expect(result.items.map((i) => i.total_price_after_discount)).toEqual(['52.56', '19.12', '0.96']);
    expect(result.amounts).toEqual({
      total_items_amount: '72.64',
      taxable_items_amount: '72.64',
      tangible_items_amount: '72.64',
      non_taxable_amount: '0.00',
      final_transaction_amount: '72.64',
      total_discount: '5.00',
      transaction_level_discount: '3.33',
    });
  });

  it('leaves credit lines out of the discount split and refuses discounts it cannot apply', () => {
    const result = calc({ items: [{ unit_price: '100' }, { unit_price: '-20' }], transactionLevelDiscount: '10' });
    expect(result.items.map((i) => i.relative_transaction_discount)).toEqual(['10.00', '0.00']);
    expect(result.amounts.total_items_amount).toBe('70.00');
    const bad = calculate({
      currency: 'USD',
      isTaxInclusive: false,
      items: [{ unit_price: '10', discount: '11' }, { unit_price: '5', quantity: '-1' }],
      transactionLevelDiscount: '100',
      location: undefined,
      overrideThreshold: false,
      table: DEFAULT_TAX_TABLE,
    });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? [] : Object.keys(bad.fields).sort()).toEqual(['items[0].discount', 'items[1].quantity', 'transaction_level_discount']);
  });

  it('rounds to the minor unit of the currency: JPY 0 decimals, KWD 3', () => {
    expect(taxOf(calc({ currency: 'JPY', items: [{ unit_price: '1000', quantity: '3' }] }))).toBe('266');
    const kwd = calc({ currency: 'KWD', items: [{ unit_price: '10.125' }] });
    expect(kwd.items[0]!.jurisdiction_tax_breakdown?.city?.tax_due).toBe('0.456');
    expect(taxOf(kwd)).toBe('0.899');
  });

  it('takes the tax out of tax-inclusive prices and splits it over the levels', () => {
    const result = calc({ isTaxInclusive: true, items: [{ unit_price: '108.88' }] });
    expect(taxOf(result)).toBe('8.88');
    const breakdown = result.items[0]!.jurisdiction_tax_breakdown!;
    expect([breakdown.state!.tax_due, breakdown.city!.tax_due, breakdown.mta!.tax_due]).toEqual(['4.00', '4.50', '0.38']);
    expect(breakdown.state!.taxable_amount).toBe('100.00');
  });
});

describe('calculate: the tax table', () => {
  const one = (address: Parameters<typeof geocode>[0], extra: Partial<CalcInput> = {}) =>
    calc({ location: at(address), items: [{ unit_price: '100.00' }], ...extra });

  it('sums the state, county, city, mta and spd levels of the locality, each rounded half-up', () => {
    expect(taxOf(one(NYC))).toBe('8.88'); // 4.00 + 4.50 + 0.375→0.38
    expect(taxOf(one(LA))).toBe('9.50'); // 7.25 + 0.25 + 2.00
    expect(taxOf(one({ city: 'San Francisco', state: 'CA', zip: '94103', country: 'US' }))).toBe('8.88'); // 7.25 + 0.25 + 1.375→1.38
    expect(taxOf(one({ city: 'Austin', state: 'TX', zip: '78701', country: 'US' }))).toBe('8.25');
    expect(taxOf(one({ city: 'Albany', state: 'NY', country: 'US' }))).toBe('8.00'); // found by city
    expect(taxOf(one({ state: 'CA', zip: '95814', country: 'US' }))).toBe('7.25'); // state level only
    const nyc = one(NYC).items[0]!;
    expect(nyc.jurisdiction_tax_breakdown?.mta).toEqual({
      jurisdiction_type: 'mta',
      jurisdiction_name: 'Metropolitan Commuter Transportation District',
      gross_sales: '100.00',
      taxable_amount: '100.00',
      non_taxable_amount: '0.00',
      tax_rate: '0.00375',
      tax_due: '0.38',
    });
    expect(nyc.tax.effective_tax_rate).toBe('0.0888');
  });

  it('does not collect without nexus unless override_threshold, nor outside the table or the country', () => {
    const seattle = { street: '1 Pike St', city: 'Seattle', state: 'WA', zip: '98101', country: 'US' };
    expect(one(seattle).items[0]).toMatchObject({ taxability_reason: 'not_collecting', taxable_category: 'not_taxable' });
    expect(taxOf(one(seattle, { overrideThreshold: true }))).toBe('10.35');
    expect(one({ state: 'FL', country: 'US' }).items[0]!.taxability_reason).toBe('not_collecting');
    expect(one({ city: 'Berlin', country: 'DE' }).items[0]!.taxability_reason).toBe('not_subject_to_tax');
    expect(calc({ location: undefined, items: [{ unit_price: '1' }] }).items[0]!.taxability_reason).toBe('not_collecting');
  });

  it('exempts products by tax_code per state and classifies tangibility', () => {
    const grocery = one(NYC, { items: [{ unit_price: '100', tax_code: 'grocery' }] }).items[0]!;
    expect(grocery).toMatchObject({ taxability_reason: 'product_exempt', taxable_category: 'not_taxable', is_exempt: false, tangible_category: 'tangible' });
    expect(grocery.jurisdiction_tax_breakdown?.state).toMatchObject({ taxable_amount: '0.00', non_taxable_amount: '100.00', tax_due: '0.00' });
    expect(one(LA, { items: [{ unit_price: '100', tax_code: 'digital' }] }).items[0]!.taxability_reason).toBe('product_exempt');
    const digitalNy = one(NYC, { items: [{ unit_price: '100', tax_code: 'digital' }] });
    expect(digitalNy.items[0]).toMatchObject({ taxability_reason: 'standard_rated', tangible_category: 'intangible' });
    expect(digitalNy.amounts.tangible_items_amount).toBe('0.00');
  });

  it('taxes shipping at the shipping address rate unless its tax_code is exempt there; total_tax includes it', () => {
    const ny = calc({ location: at(NYC), items: [{ unit_price: '100' }], shipping: { amount: '10.00' } });
    expect(ny.shipping?.tax.total_tax).toBe('0.89'); // 0.40 + 0.45 + 0.0375→0.04
    expect(ny.tax.total_tax).toBe('9.77');
    expect(ny.amounts.final_transaction_amount).toBe('110.00');
    const ca = calc({ location: at(LA), items: [{ unit_price: '100' }], shipping: { amount: '10.00', tax_code: 'shipping' } });
    expect(ca.shipping).toMatchObject({ taxability_reason: 'product_exempt', tax: { total_tax: '0.00' } });
    expect(ca.tax.total_tax).toBe('9.50');
  });
});

describe('calculate: exemptions and manual rates', () => {
  it('a full customer exemption (or retail_exempt) exempts every item and the shipping', () => {
    const result = calc({ items: [{ unit_price: '100' }], shipping: { amount: '10' }, customerExemption: { kind: 'full' } });
    expect(result.items[0]).toMatchObject({ taxability_reason: 'customer_exempt', is_exempt: true, taxable_category: 'not_taxable' });
    expect(result.shipping?.taxability_reason).toBe('customer_exempt');
    expect(result.tax.total_tax).toBe('0.00');
    expect(result.amounts.non_taxable_amount).toBe('100.00');
  });

  it('a partial exemption removes the state level only', () => {
    const item = calc({ items: [{ unit_price: '100' }], customerExemption: { kind: 'partial', exemptionId: 'x' } }).items[0]!;
    expect(item).toMatchObject({ taxability_reason: 'customer_exempt', is_exempt: false, taxable_category: 'taxable' });
    expect(item.tax.total_tax).toBe('4.88');
    expect(item.jurisdiction_tax_breakdown?.state).toMatchObject({ taxable_amount: '0.00', non_taxable_amount: '100.00', tax_due: '0.00' });
  });

  it('an item exemption applies to its item only', () => {
    const result = calc({ items: [{ unit_price: '100' }, { unit_price: '100' }], itemExemptions: [{ kind: 'full', exemptionId: 'x' }, undefined] });
    expect(result.items.map((i) => i.tax.total_tax)).toEqual(['0.00', '8.88']);
  });

  it('manual rates bypass the lookup (location, nexus, product) but not customer exemptions', () => {
    const single = calc({ location: undefined, items: [{ unit_price: '100', tax_code: 'grocery', manual_sales_tax_rate: '0.0825' }] }).items[0]!;
    expect(single).toMatchObject({ taxability_reason: 'standard_rated', tax: { total_tax: '8.25' } });
    expect(single.jurisdiction_tax_breakdown).toBeUndefined();
    const perLevel = calc({ items: [{ unit_price: '100', manual_sales_tax_rates: { state: '0.05', city: '0.015' } }] }).items[0]!;
    expect(perLevel.tax.total_tax).toBe('6.50');
    expect(perLevel.manual_jurisdiction_tax_breakdown).toEqual({
      state: { jurisdiction_type: 'state', gross_sales: '100.00', taxable_amount: '100.00', non_taxable_amount: '0.00', tax_rate: '0.05', tax_due: '5.00' },
      city: { jurisdiction_type: 'city', gross_sales: '100.00', taxable_amount: '100.00', non_taxable_amount: '0.00', tax_rate: '0.015', tax_due: '1.50' },
    });
    expect(calc({ items: [{ unit_price: '100', manual_sales_tax_rate: '0' }] }).items[0]!.taxability_reason).toBe('zero_rated');
    expect(calc({ items: [{ unit_price: '100', manual_sales_tax_rate: '0.1' }], customerExemption: { kind: 'full' } }).tax.total_tax).toBe('0.00');
    const both = calculate({
      currency: 'USD',
      isTaxInclusive: false,
      items: [{ unit_price: '1', manual_sales_tax_rate: '0.1', manual_sales_tax_rates: { state: '1.5' } }],
      location: undefined,
      overrideThreshold: false,
      table: DEFAULT_TAX_TABLE,
    });
    expect(both.ok ? {} : both.fields).toEqual({
      'items[0].manual_sales_tax_rates': ['send manual_sales_tax_rate or manual_sales_tax_rates, not both'],
      'items[0].manual_sales_tax_rates.state': [expect.stringMatching(/1\.5 looks like a percentage — send 0\.015/)],
    });
  });
});

describe('calculate: linked refunds', () => {
  it('takes the original tax times the fraction, rounded half-up, spread over the lines by their own tax', () => {
    expect(taxOf(calc({ items: [{ unit_price: '50' }], linkedRefund: { originalTotalTax: '8.88', fraction: '0.5' } }))).toBe('4.44');
    expect(taxOf(calc({ items: [{ unit_price: '50' }], linkedRefund: { originalTotalTax: '9.17', fraction: '0.5' } }))).toBe('4.59');
    expect(taxOf(calc({ items: [{ unit_price: '50' }], linkedRefund: { originalTotalTax: '10.00', fraction: '0.333333' } }))).toBe('3.33');
    const split = calc({
      items: [{ unit_price: '60' }, { unit_price: '40' }, { unit_price: '10', tax_code: 'grocery' }],
      linkedRefund: { originalTotalTax: '8.88', fraction: '1' },
    });
    expect(split.items.map((i) => i.tax.total_tax)).toEqual(['5.33', '3.55', '0.00']);
    expect(split.items[0]!.jurisdiction_tax_breakdown).toBeUndefined();
    expect(split.tax.total_tax).toBe('8.88');
  });
});

describe('exemption windows', () => {
  const exemption = (over: Partial<ExemptionRecord> = {}): ExemptionRecord => ({
    id: 'e',
    customer_id: 'c',
    country: 'US',
    jurisdictions: [],
    start_date: '2025-01-01',
    end_date: '2025-06-30',
    exemption_type: 'full',
    exemption_status: 'active',
    created_at: '',
    updated_at: '',
    ...over,
  });
  const ny = { location: at(NYC), date: '2025-03-01' };

  it('applies from start_date to end_date inclusive, or without end when end_date is null', () => {
    expect(exemptionApplies(exemption(), { ...ny, date: '2024-12-31' })).toBe(false);
    expect(exemptionApplies(exemption(), { ...ny, date: '2025-01-01' })).toBe(true);
    expect(exemptionApplies(exemption(), { ...ny, date: '2025-06-30' })).toBe(true);
    expect(exemptionApplies(exemption(), { ...ny, date: '2025-07-01' })).toBe(false);
    expect(exemptionApplies(exemption({ end_date: null }), { ...ny, date: '2099-01-01' })).toBe(true);
  });

  it('only while active, in its country, and in a listed jurisdiction (none listed = the whole country)', () => {
    expect(exemptionApplies(exemption({ exemption_status: 'cancelled' }), ny)).toBe(false);
    expect(exemptionApplies(exemption({ country: 'CA' }), ny)).toBe(false);
    for (const j of ['NY', 'us-ny', 'New York']) expect(exemptionApplies(exemption({ jurisdictions: [j] }), ny)).toBe(true);
    expect(exemptionApplies(exemption({ jurisdictions: ['CA', 'TX'] }), ny)).toBe(false);
    expect(exemptionApplies(exemption(), { location: undefined, date: '2025-03-01' })).toBe(false);
  });
});

describe('geocode: matched_address confidence from how complete the address is', () => {
  const matched = (address: Parameters<typeof geocode>[0]) => geocode(address, DEFAULT_TAX_TABLE).matched;

  it('scores street, zip, city and state matches and flags low confidence below 0.70', () => {
    expect(matched(NYC)).toMatchObject({ match_level: 'street', confidence: '1.00', address_corrected: false, low_confidence_warning: false, latitude: '40.7128' });
    expect(matched({ city: 'New York', state: 'NY', zip: '10001', country: 'US' })).toMatchObject({ match_level: 'zip', confidence: '0.90' });
    expect(matched({ street: '1 Main', city: 'Brooklyn', state: 'NY', zip: '10001', country: 'US' })).toMatchObject({
      confidence: '0.80',
      address_corrected: true,
      address: { city: 'New York' },
    });
    expect(matched({ city: 'austin', state: 'TX', country: 'US' })).toMatchObject({ match_level: 'city', confidence: '0.75', address_corrected: true });
    expect(matched({ city: 'Austin', state: 'TX', zip: '73301', country: 'US' })).toMatchObject({ confidence: '0.60', low_confidence_warning: true });
    expect(matched({ state: 'california', country: 'US' })).toMatchObject({ match_level: 'state', confidence: '0.50', low_confidence_warning: true, address: { state: 'CA' } });
    expect(matched({ street: '1 Main', city: 'Los Angeles', state: 'CA', zip: '90012' })).toMatchObject({ confidence: '1.00', address_corrected: true, address: { country: 'US' } });
    expect(matched({ street: 'nowhere' })).toMatchObject({ match_level: 'unmatched', confidence: '0.00', low_confidence_warning: true });
  });
});
