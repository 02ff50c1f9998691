import { describe, expect, it } from 'vitest';
import { COUNTRY_COUNT, EU_STATES, isCountry } from '../../../src/emulator/contract/iso-3166.js';
import { isCurrency, minorUnitsOf } from '../../../src/emulator/contract/iso-4217.js';
import { VAT_NUMBER_COUNTRIES, vatNumberFinding, vatNumberSample } from '../../../src/emulator/contract/vat-numbers.js';
import { rescale } from '../../../src/emulator/variety/shape.js';

// The emulator's own reading of the reference data behind VAT rules 4, 5 and 6 and the tax
// engine's rounding, checked against the standards themselves (not against taxsync's client).

describe('ISO 3166-1 alpha-2 (rule 6)', () => {
  it('holds the 249 officially assigned codes and refuses user-assigned ones', () => {
    expect(COUNTRY_COUNT).toBe(249);
    for (const code of ['DE', 'GR', 'GB', 'US', 'AX', 'SS', 'BQ', 'CW']) expect(isCountry(code), code).toBe(true);
    for (const code of ['XK', 'XI', 'EL', 'UK', 'EU', 'ZZ', 'de']) expect(isCountry(code), code).toBe(false);
  });

  it('knows the 27 EU member states', () => {
    expect(EU_STATES.size).toBe(27);
    expect(EU_STATES.has('GR')).toBe(true);
    expect(EU_STATES.has('GB')).toBe(false);
  });
});

describe('ISO 4217 (rule 5, and the minor unit of tax rounding)', () => {
  it('gives each currency its minor unit', () => {
    expect([minorUnitsOf('EUR'), minorUnitsOf('USD'), minorUnitsOf('JPY'), minorUnitsOf('KRW'), minorUnitsOf('KWD'), minorUnitsOf('BHD'), minorUnitsOf('CLF')]).toEqual([2, 2, 0, 0, 3, 3, 4]);
  });

  it('refuses codes that are not currencies an invoice is written in', () => {
    for (const code of ['EUR', 'XCG', 'ANG', 'CHW']) expect(isCurrency(code), code).toBe(true);
    for (const code of ['EUX', 'XAU', 'XTS', 'XXX', 'XDR', 'HRK', 'eur']) expect(isCurrency(code), code).toBe(false);
  });
});

describe('VAT number formats (rule 4)', () => {
  it('accepts each country sample, with or without its prefix, ignoring spaces, dots and hyphens', () => {
    expect(VAT_NUMBER_COUNTRIES).toHaveLength(30);
    for (const country of VAT_NUMBER_COUNTRIES) {
      const sample = vatNumberSample(country)!;
      expect(vatNumberFinding(sample, country), sample).toBeUndefined();
      const prefix = country === 'GR' ? 'EL' : country === 'CH' ? 'CHE' : country;
      const national = sample.replace(/[\s.-]/g, '').slice(prefix.length);
      expect(vatNumberFinding(national, country), `${country} ${national}`).toBeUndefined();
    }
    expect(vatNumberFinding('de 123.456-789', 'DE')).toBeUndefined();
  });

  it('refuses a number of the wrong length or shape, naming the country and an example', () => {
    expect(vatNumberFinding('DE12345', 'DE')).toMatch(/does not match the DE VAT number format \(such as DE999999999\)/);
    expect(vatNumberFinding('12345678A', 'AT')).toMatch(/does not match the AT VAT number format/);
    // Spain: a letter first or last, never nine digits.
    expect(vatNumberFinding('ESB12345678', 'ES')).toBeUndefined();
    expect(vatNumberFinding('ES12345678Z', 'ES')).toBeUndefined();
    expect(vatNumberFinding('ES123456789', 'ES')).toMatch(/does not match/);
  });

  it('says when a number is written as another country`s (Greece is EL)', () => {
    expect(vatNumberFinding('DE123456789', 'AT')).toMatch(/written as a DE VAT number, but partner_country is AT/);
    expect(vatNumberFinding('EL123456789', 'GR')).toBeUndefined();
  });

  it('does not check countries outside the EU, GB, CH and NO', () => {
    expect(vatNumberFinding('anything', 'US')).toBeUndefined();
    expect(vatNumberFinding('12-3456789', 'AU')).toBeUndefined();
  });
});

describe('decimal scales of varied answers', () => {
  it('writes the same value with another scale, never another value', () => {
    expect(['canonical', 'shortest', 'one', 'six'].map((s) => rescale('10.00', s as never))).toEqual(['10.00', '10', '10.0', '10.000000']);
    expect(['shortest', 'one', 'six'].map((s) => rescale('0.0825', s as never))).toEqual(['0.0825', '0.0825', '0.082500']);
    expect(rescale('-0.00', 'shortest')).toBe('0');
    expect(rescale('0.12345678', 'six')).toBe('0.12345678');
    expect(rescale('not a number', 'six')).toBe('not a number');
  });
});
