import { describe, expect, it } from 'vitest';
import { formatDecimal, formatMoney, fromMinorUnits, isoExponent, money, ratio } from '../../../src/domain/money.js';

describe('money', () => {
  it.each([
    ['JPY', '1234', 0, '1234'],
    ['KWD', '1234', 3, '1.234'],
    ['USD', '1234', 2, '12.34'],
    ['USD', '-5', 2, '-0.05'],
  ])('converts %s minor units %s exactly', (currency, units, exponent, expected) => {
    expect(isoExponent(currency)).toBe(exponent);
    expect(formatDecimal(fromMinorUnits(units, exponent))).toBe(expected);
  });

  it.each([
    ['0.125', 2, '0.13'],
    ['0.135', 2, '0.14'],
    ['-0.125', 2, '-0.13'],
    ['2.5', 0, '3'],
    ['1.2345', 3, '1.235'],
    ['10', 2, '10.00'],
  ])('rounds %s to %i decimals half-up as %s', (value, decimals, expected) => {
    expect(formatMoney(money(value), decimals)).toBe(expected);
  });

  it('rounds half-cents to even when asked', () => {
    expect(formatMoney(money('0.125'), 2, 'half_even')).toBe('0.12');
  });

  it('keeps sums exact where floating point would not', () => {
    expect(formatDecimal(money('0.1').plus(money('0.2')))).toBe('0.3');
  });

  it('computes exact fractions', () => {
    expect(formatDecimal(ratio(money('25'), money('100')))).toBe('0.25');
    expect(ratio(money('1'), money('3')).times(3).toFixed(20)).toBe('1.00000000000000000000');
  });

  it('refuses numbers written as exponents or blanks', () => {
    expect(() => money('1e3')).toThrow(/not a decimal string/);
    expect(() => money('')).toThrow(/not a decimal string/);
    expect(() => fromMinorUnits('12.5', 2)).toThrow(/integer/);
  });
});
