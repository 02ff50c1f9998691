import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Registration } from '../../../src/api/schemas/vat-answers.js';
import { DEFAULT_VAT_SETTINGS, VatRegistration, VatSettings, matchRegistration, registrationRef, vatEnabled } from '../../../src/mapping/vat-settings.js';
import { EJ_DE } from './vat-fixtures.js';

const problems = (input: unknown): string[] => {
  const result = VatSettings.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('VAT settings', () => {
  it('defaults: VAT off, finalised, quarterly, split, tolerance 0.01', () => {
    expect(vatEnabled(DEFAULT_VAT_SETTINGS)).toBe(false);
    expect(DEFAULT_VAT_SETTINGS).toMatchObject({
      registrations: [],
      reporting_period: 'quarterly',
      submit_when: 'finalised',
      distance_sales: 'destination',
      mixed_rates: 'split',
      invoice_number: { from: 'number', prefix_by_source: {} },
      rate_types: { by_sku: {}, by_tax_code: {}, zero_rate: 'zero_rated' },
      transaction_types: { b2b: 'B2B Sales', b2c: 'B2C Sales', intra_eu: 'Intra-EU Supplies', export: 'Exports', import_services: 'Import Services' },
      tolerance: '0.01',
    });
  });

  it('normalises registrations: country from the taxable jurisdiction, scheme from the registration type and back', () => {
    const s = VatSettings.parse({
      seller_country: 'DE',
      registrations: [
        { entity_jurisdiction: EJ_DE.toUpperCase(), country: 'DE' },
        { taxable_jurisdiction: 'DE', registration_type: 'one_stop_shop' },
        { taxable_jurisdiction: 'AT' },
        { taxable_jurisdiction: 'FR', scheme: 'domestic', reporting_period: 'monthly' },
      ],
    });
    expect(s.registrations).toEqual([
      { entity_jurisdiction: EJ_DE, country: 'DE', scheme: 'domestic' },
      { taxable_jurisdiction: 'DE', registration_type: 'one_stop_shop', country: 'DE', scheme: 'oss' },
      { taxable_jurisdiction: 'AT', registration_type: 'standard', country: 'AT', scheme: 'domestic' },
      { taxable_jurisdiction: 'FR', registration_type: 'standard', country: 'FR', scheme: 'domestic', reporting_period: 'monthly' },
    ]);
    expect(s.registrations.map(registrationRef)).toEqual([EJ_DE, 'DE/one_stop_shop', 'AT/standard', 'FR/standard']);
    expect(vatEnabled(s)).toBe(true);
  });

  it('refuses what would leave a supply without exactly one registration, naming the path', () => {
    expect(problems({ registrations: [{ entity_jurisdiction: EJ_DE, country: 'DE' }] })).toEqual([expect.stringMatching(/^seller_country: is required/)]);
    expect(problems({ seller_country: 'DE', registrations: [{ country: 'DE' }] })[0]).toMatch(/registrations\.0\.entity_jurisdiction: give exactly one/);
    expect(problems({ seller_country: 'DE', registrations: [{ entity_jurisdiction: EJ_DE, taxable_jurisdiction: 'DE' }] })[0]).toMatch(/give exactly one/);
    expect(problems({ seller_country: 'DE', registrations: [{ entity_jurisdiction: EJ_DE }] })[0]).toMatch(/registrations\.0\.country: name the VAT country/);
    expect(problems({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'US-CA' }] })[0]).toMatch(/name the VAT country/);
    expect(problems({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }, { entity_jurisdiction: EJ_DE, country: 'DE' }] })[0]).toMatch(
      /registrations\.1: registrations\[0\] already covers domestic VAT in DE/,
    );
    expect(problems({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE', scheme: 'oss' }, { taxable_jurisdiction: 'IE', scheme: 'oss' }] })[0]).toMatch(/already covers the OSS/);
    expect(problems({ seller_country: 'GB', registrations: [{ taxable_jurisdiction: 'GB', scheme: 'oss' }] })[0]).toMatch(/OSS registration is held in an EU member state; GB/);
    expect(problems({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE', registration_type: 'standard', scheme: 'oss' }] })[0]).toMatch(/scheme oss does not fit registration_type standard/);
  });

  it('refuses typos, percentages written as fractions, unknown countries and rate types', () => {
    expect(problems({ submit_when: 'issued' })[0]).toMatch(/^submit_when:/);
    expect(problems({ registration: [] })[0]).toMatch(/Unrecognized key/);
    expect(problems({ rates: { DE: { standard: '19%' } } })[0]).toMatch(/rates\.DE\.standard: must be a percentage/);
    expect(problems({ rates: { DE: { reduced: ['7.125'] } } })[0]).toMatch(/at most 2 decimals/);
    expect(problems({ rates: { DE: { standard: '119' } } })[0]).toMatch(/below 100/);
    expect(problems({ rates: { XX: { standard: '19' } } })[0]).toMatch(/rates\.XX: XX is not an ISO 3166-1/);
    expect(problems({ seller_country: 'UK' })[0]).toMatch(/seller_country: must be an ISO 3166-1 alpha-2/);
    expect(problems({ rate_types: { by_tax_code: { FIN: 'free' } } })[0]).toMatch(/rate_types\.by_tax_code\.FIN/);
    expect(problems({ tolerance: '-0.01' })[0]).toMatch(/tolerance: must be a non-negative decimal/);
  });

  it('parses the example of docs/vat.md', () => {
    const doc = readFileSync(new URL('../../../docs/vat.md', import.meta.url), 'utf8');
    const settings = doc.slice(doc.indexOf('## Settings'));
    const json = /```json\n([\s\S]*?)```/.exec(settings)?.[1];
    expect(json).toBeDefined();
    const parsed = VatSettings.parse((JSON.parse(json!) as { vat: unknown }).vat);
    expect(parsed.registrations.map(registrationRef)).toEqual(['0d000000-0000-4000-8000-0000000000de', 'DE/one_stop_shop', 'AT/standard']);
  });
});

describe('matchRegistration: a registration configured by taxable jurisdiction, found in the fetched list', () => {
  const reg = (id: string, iso: string, type: Registration['registration_type'], ej: string | undefined, extra: Partial<Registration> = {}): Registration => ({
    id,
    registration_type: type,
    taxable_jurisdiction_detail: { iso },
    ...(ej === undefined ? {} : { entity_jurisdiction: ej }),
    ...extra,
  });
  const E1 = 'aaaaaaaa-0000-4000-8000-000000000001';
  const E2 = 'aaaaaaaa-0000-4000-8000-000000000002';
  const standard = VatRegistration.parse({ taxable_jurisdiction: 'DE' });
  const oss = VatRegistration.parse({ taxable_jurisdiction: 'DE', registration_type: 'one_stop_shop' });
  const forEntity = VatRegistration.parse({ taxable_jurisdiction: 'DE', entity: E2 });

  it('matches ISO code and type, prefers an active registration, and lowercases the UUID', () => {
    const list = [
      reg('11111111-0000-4000-8000-000000000001', 'DE', 'standard', 'BBBBBBBB-0000-4000-8000-000000000001', { status: 'inactive' }),
      reg('11111111-0000-4000-8000-000000000002', 'de', 'standard', 'BBBBBBBB-0000-4000-8000-000000000002', { status: 'active' }),
      reg('11111111-0000-4000-8000-000000000003', 'DE', 'one_stop_shop', 'bbbbbbbb-0000-4000-8000-000000000003'),
    ];
    expect(matchRegistration(standard, list)).toMatchObject({ ok: true, entity_jurisdiction: 'bbbbbbbb-0000-4000-8000-000000000002' });
    expect(matchRegistration(oss, list)).toMatchObject({ ok: true, entity_jurisdiction: 'bbbbbbbb-0000-4000-8000-000000000003' });
  });

  it('prefers a registration whose status is a value added later over one the service calls inactive or pending', () => {
    // A closing registration shows a status the document does not list (`deregistration_pending`)
    // while its closed predecessor is `inactive`: the one still open is the one filed under.
    const closed = reg('11111111-0000-4000-8000-000000000006', 'DE', 'standard', 'dddddddd-0000-4000-8000-000000000001', { status: 'inactive' });
    const closing = reg('11111111-0000-4000-8000-000000000007', 'DE', 'standard', 'dddddddd-0000-4000-8000-000000000002', { status: 'deregistration_pending' });
    const future = reg('11111111-0000-4000-8000-000000000008', 'DE', 'standard', 'dddddddd-0000-4000-8000-000000000003', { status: 'pending' });
    expect(matchRegistration(standard, [closed, closing])).toMatchObject({ ok: true, entity_jurisdiction: 'dddddddd-0000-4000-8000-000000000002' });
    expect(matchRegistration(standard, [future, closing, closed])).toMatchObject({ ok: true, entity_jurisdiction: 'dddddddd-0000-4000-8000-000000000002' });
  });

  it('reports a missing and an ambiguous registration; an entity narrows the match', () => {
    expect(matchRegistration(oss, [])).toMatchObject({ ok: false, reason: expect.stringMatching(/no registration DE\/one_stop_shop/) });
    const two = [
      reg('11111111-0000-4000-8000-000000000004', 'DE', 'standard', 'cccccccc-0000-4000-8000-000000000001', { entity_detail: { id: E1 } }),
      reg('11111111-0000-4000-8000-000000000005', 'DE', 'standard', 'cccccccc-0000-4000-8000-000000000002', { entity_detail: { id: E2 } }),
    ];
    expect(matchRegistration(standard, two)).toMatchObject({ ok: false, reason: expect.stringMatching(/matches 2 entity jurisdictions/) });
    expect(matchRegistration(forEntity, two)).toMatchObject({ ok: true, entity_jurisdiction: 'cccccccc-0000-4000-8000-000000000002' });
  });
});
