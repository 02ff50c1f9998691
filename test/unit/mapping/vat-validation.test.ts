import { describe, expect, it } from 'vitest';
import { checkVatTransaction, validateVatTransaction, type VatValidationOptions } from '../../../src/mapping/vat-validation.js';
import { EJ_DE, TYPES, typeId } from './vat-fixtures.js';

const OPTIONS: VatValidationOptions = { today: '2025-03-15', knownTypeIds: new Set(TYPES.map((t) => t.id)), tolerance: '0.01' };

const body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  entity_jurisdiction: EJ_DE,
  invoice_number: 'INV-1001',
  invoice_date: '2025-03-02',
  partner_name: 'Acme GmbH',
  partner_country: 'DE',
  vat_number: 'DE123456789',
  net: '100.00',
  vat: '19.00',
  gross: '119.00',
  vat_rate: '19.00',
  vat_rate_type: 'standard',
  currency: 'EUR',
  reporting_period: '2025-01-01',
  transaction_type_id: typeId('B2B Sales'),
  source: 'api',
  ...overrides,
});

describe('local VAT validation: the rules of vat-compliance-api.md, in the service\'s {field: [messages]} shape', () => {
  it('passes a valid body', () => {
    expect(validateVatTransaction(body(), OPTIONS)).toEqual({});
  });

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['1. net + vat = gross', { gross: '118.00' }, 'gross', /net \+ vat must equal gross: 100\.00 \+ 19\.00 = 119\.00, not 118\.00/],
    ['2. net × rate / 100 = vat within the tolerance', { vat: '18.98', gross: '118.98' }, 'vat', /net × vat_rate \/ 100 = 19\.00 within 0\.01; got 18\.98/],
    ['3. invoice_date not in the future', { invoice_date: '2025-03-16' }, 'invoice_date', /2025-03-16 is in the future \(today is 2025-03-15\)/],
    ['4. vat_number in the partner country\'s format', { vat_number: 'DE12345' }, 'vat_number', /does not match the DE VAT number format/],
    ['5. currency in ISO 4217', { currency: 'EUX' }, 'currency', /EUX is not an ISO 4217 currency code/],
    ['6. partner_country in ISO 3166-1 alpha-2', { partner_country: 'XX', vat_number: undefined }, 'partner_country', /XX is not an ISO 3166-1 alpha-2/],
    ['8. at most 2 decimal places (net)', { net: '100.001' }, 'net', /at most 2 decimal places/],
    ['8. at most 2 decimal places (vat_rate)', { vat_rate: '19.000' }, 'vat_rate', /at most 2 decimal places/],
    ['9. net positive', { net: '0.00', vat: '0.00', gross: '0.00' }, 'net', /net must be positive \(got 0\.00\)/],
    ['9. net positive (negative)', { net: '-100.00', vat: '-19.00', gross: '-119.00' }, 'net', /net must be positive/],
    ['10. a known transaction type', { transaction_type_id: '00000000-0000-4000-8000-000000000000' }, 'transaction_type_id', /not a known transaction type/],
    ['length: invoice_number at most 255', { invoice_number: 'x'.repeat(256) }, 'invoice_number', /255/],
    ['length: partner_name at most 255', { partner_name: 'x'.repeat(256) }, 'partner_name', /255/],
    ['length: vat_number at most 255', { partner_country: 'US', vat_number: 'x'.repeat(256) }, 'vat_number', /255/],
  ];
  for (const [rule, override, field, message] of cases) {
    it(`rule ${rule}: refused on ${field}`, () => {
      const errors = validateVatTransaction(body(override), OPTIONS);
      expect(Object.keys(errors)).toEqual([field]);
      expect(errors[field]![0]).toMatch(message);
    });
  }

  it('rule 7 (invoice_number unique per entity jurisdiction) is not checkable locally: the service and the ledger own it', () => {
    expect(validateVatTransaction(body(), OPTIONS)).toEqual({});
    expect(validateVatTransaction(body(), OPTIONS)).toEqual({});
  });

  it('rule 2 accepts a difference up to the tolerance and notes it; the tolerance is a setting', () => {
    const near = checkVatTransaction(body({ vat: '19.01', gross: '119.01' }), OPTIONS);
    expect(near.errors).toEqual({});
    expect(near.notes.vat![0]).toMatch(/within the tolerance of 0\.01/);
    expect(validateVatTransaction(body({ vat: '19.04', gross: '119.04' }), { ...OPTIONS, tolerance: '0.05' })).toEqual({});
    expect(Object.keys(validateVatTransaction(body({ vat: '19.02', gross: '119.02' }), OPTIONS))).toEqual(['vat']);
  });

  it('compares invoice_date with today as dates: today itself is fine', () => {
    expect(validateVatTransaction(body({ invoice_date: '2025-03-15' }), OPTIONS)).toEqual({});
  });

  it('checks vat_number only for countries with a format, and only when there is one', () => {
    expect(validateVatTransaction(body({ partner_country: 'US', vat_number: '12-3456789' }), OPTIONS)).toEqual({});
    expect(validateVatTransaction(body({ vat_number: undefined }), OPTIONS)).toEqual({});
    expect(validateVatTransaction(body({ vat_number: 'ATU12345678' }), OPTIONS).vat_number![0]).toMatch(/is a AT VAT number/);
  });

  it('names missing, null, malformed and unknown fields, and reports every problem at once', () => {
    const { invoice_number: _n, ...rest } = body();
    const errors = validateVatTransaction({ ...rest, partner_name: null, net: 100, invoiceNumber: 'X', currency: 'EUX' }, OPTIONS);
    expect(errors.invoice_number).toEqual(['This field is required.']);
    expect(errors.partner_name).toEqual(['This field may not be null.']);
    expect(errors.net![0]).toMatch(/string/);
    expect(errors.invoiceNumber).toEqual(['unknown field invoiceNumber']);
    expect(errors.currency![0]).toMatch(/ISO 4217/);
    expect(validateVatTransaction([1], OPTIONS)).toEqual({ '(body)': ['the body must be a JSON object'] });
  });

  it('refuses an unknown vat_rate_type and a malformed date', () => {
    const errors = validateVatTransaction(body({ vat_rate_type: 'super_reduced', reporting_period: '2025-02-30' }), OPTIONS);
    expect(Object.keys(errors).sort()).toEqual(['reporting_period', 'vat_rate_type']);
  });
});
