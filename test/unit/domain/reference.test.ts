import { describe, expect, it } from 'vitest';
import { EU_MEMBERS, ISO_COUNTRIES, ISO_CURRENCIES, VAT_FORMATS, hasVatNumberFormat, vatNumberProblem } from '../../../src/domain/reference/index.js';

describe('ISO reference lists', () => {
  it('has the 249 ISO 3166-1 alpha-2 codes and no user-assigned ones', () => {
    expect(ISO_COUNTRIES.size).toBe(249);
    for (const code of ['DE', 'GR', 'GB', 'CH', 'NO', 'US', 'JP', 'KW']) expect(ISO_COUNTRIES.has(code), code).toBe(true);
    for (const code of ['EL', 'UK', 'XK', 'XI', 'EU', 'de']) expect(ISO_COUNTRIES.has(code), code).toBe(false);
  });

  it('has the ISO 4217 codes of 0-, 2- and 3-decimal currencies', () => {
    for (const code of ['EUR', 'USD', 'GBP', 'CHF', 'NOK', 'JPY', 'KWD', 'BHD']) expect(ISO_CURRENCIES.has(code), code).toBe(true);
    for (const code of ['EUX', 'XAU', 'eur', 'EURO']) expect(ISO_CURRENCIES.has(code), code).toBe(false);
  });

  it('has the 27 EU member states, each an ISO code with a VAT number format', () => {
    expect(EU_MEMBERS.size).toBe(27);
    for (const code of EU_MEMBERS) {
      expect(ISO_COUNTRIES.has(code), code).toBe(true);
      expect(hasVatNumberFormat(code), code).toBe(true);
    }
    expect(EU_MEMBERS.has('GB')).toBe(false);
  });
});

describe('VAT number formats: every EU member state plus GB, CH and NO', () => {
  // [country, a valid number, an invalid number]
  const table: [string, string, string][] = [
    ['AT', 'ATU12345678', 'AT12345678'],
    ['BE', 'BE0123456789', 'BE2123456789'],
    ['BG', 'BG123456789', 'BG12345678'],
    ['CY', 'CY12345678X', 'CY123456789'],
    ['CZ', 'CZ12345678', 'CZ1234567'],
    ['DE', 'DE123456789', 'DE12345678'],
    ['DK', 'DK12345678', 'DK1234567'],
    ['EE', 'EE123456789', 'EE12345678'],
    ['ES', 'ESB12345678', 'ES123456789'],
    ['FI', 'FI12345678', 'FI1234567'],
    ['FR', 'FR12345678901', 'FR1234567890'],
    ['GR', 'EL123456789', 'EL12345678'],
    ['HR', 'HR12345678901', 'HR1234567890'],
    ['HU', 'HU12345678', 'HU1234567'],
    ['IE', 'IE1234567T', 'IE1234567'],
    ['IT', 'IT12345678901', 'IT1234567890'],
    ['LT', 'LT123456789', 'LT1234567890'],
    ['LU', 'LU12345678', 'LU1234567'],
    ['LV', 'LV12345678901', 'LV1234567890'],
    ['MT', 'MT12345678', 'MT1234567'],
    ['NL', 'NL123456789B01', 'NL123456789A01'],
    ['PL', 'PL1234567890', 'PL123456789'],
    ['PT', 'PT123456789', 'PT12345678'],
    ['RO', 'RO1234567890', 'RO12345678901'],
    ['SE', 'SE123456789001', 'SE123456789002'],
    ['SI', 'SI12345678', 'SI1234567'],
    ['SK', 'SK1234567890', 'SK123456789'],
    ['GB', 'GB123456789', 'GB12345678'],
    ['CH', 'CHE123456789MWST', 'CHE12345678MWST'],
    ['NO', 'NO123456789MVA', 'NO12345678MVA'],
  ];

  it('covers exactly the 27 member states and GB, CH, NO', () => {
    expect(new Set(table.map(([c]) => c))).toEqual(new Set([...EU_MEMBERS, 'GB', 'CH', 'NO']));
    expect(new Set(Object.keys(VAT_FORMATS))).toEqual(new Set([...EU_MEMBERS, 'GB', 'CH', 'NO']));
  });

  for (const [country, valid, bad] of table) {
    it(`${country}: accepts ${valid} (with and without its prefix), refuses ${bad}`, () => {
      const prefix = VAT_FORMATS[country]!.prefix;
      expect(vatNumberProblem(valid, country)).toBeUndefined();
      expect(vatNumberProblem(valid.slice(prefix.length), country)).toBeUndefined();
      expect(vatNumberProblem(bad, country)).toMatch(new RegExp(`${bad}.*${country}`));
    });
  }

  it('accepts each format example, ignores spaces, dots and hyphens, and names the country a number belongs to', () => {
    for (const [country, format] of Object.entries(VAT_FORMATS)) expect(vatNumberProblem(format.example, country), country).toBeUndefined();
    expect(vatNumberProblem('CHE-123.456.789 MWST', 'CH')).toBeUndefined();
    expect(vatNumberProblem('nl 123456789 b01', 'NL')).toBeUndefined();
    expect(vatNumberProblem('ATU12345678', 'DE')).toMatch(/is a AT VAT number, but partner_country is DE/);
    expect(vatNumberProblem('DE12345678', 'DE')).toMatch(/does not match the DE VAT number format \(for example DE123456789\)/);
  });

  it('leaves numbers of countries without a format unchecked', () => {
    expect(hasVatNumberFormat('US')).toBe(false);
    expect(vatNumberProblem('anything', 'US')).toBeUndefined();
    expect(vatNumberProblem('anything', 'constructor')).toBeUndefined();
  });
});
