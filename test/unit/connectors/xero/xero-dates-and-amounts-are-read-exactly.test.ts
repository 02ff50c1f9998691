import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Money } from '../../../../src/domain/money.js';
import { XeroAmount, XeroDate, XeroGuid, parseUtcDateTime, parseXeroDate } from '../../../../src/connectors/xero/schemas.js';
import { apiFixture } from './helpers.js';

/**
 * Xero's `/Date(ms±hhmm)/` dates and JSON-number amounts. Expected instants are worked out by hand
 * or taken from the ISO twins the fixtures carry (DateString, UpdatedDateUTCString).
 */

describe('parseXeroDate', () => {
  it.each([
    ['/Date(1573755038314+0000)/', '2019-11-14T18:10:38.314Z'],
    ['/Date(1571875200000)/', '2019-10-24T00:00:00Z'],
    ['/Date(0)/', '1970-01-01T00:00:00Z'],
    ['/Date(-86400000+0000)/', '1969-12-31T00:00:00Z'],
    // The offset names the writer's zone; the number is UTC milliseconds whatever it says.
    ['/Date(1573755038314+1300)/', '2019-11-14T18:10:38.314Z'],
    ['/Date(1573755038314-0500)/', '2019-11-14T18:10:38.314Z'],
    ['/Date(253402300799999)/', '9999-12-31T23:59:59.999Z'],
    ['/Date(-62135596800000)/', '0001-01-01T00:00:00Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseXeroDate(text)).toBe(iso);
  });

  it.each([
    '/Date()/',
    '/Date(abc)/',
    '/Date(1.5)/',
    '/Date(1573755038314+2500)/',
    '/Date(1573755038314+0060)/',
    '/Date(1573755038314+00)/',
    'Date(1573755038314)',
    '/Date(1573755038314)',
    ' /Date(1573755038314)/',
    '/Date(253402300800000)/',
    '/Date(99999999999999999)/',
    '2019-11-14T18:10:38Z',
    '',
  ])('refuses %j', (text) => {
    expect(parseXeroDate(text)).toBeUndefined();
  });

  it('gives back the instant it was given, for any millisecond of years 1 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), fc.constantFrom('', '+0000', '+1300', '-0930'), (ms, offset) => {
        const iso = parseXeroDate(`/Date(${ms}${offset})/`);
        expect(iso).toBeDefined();
        expect(Date.parse(iso!)).toBe(ms);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the ISO twins of every date in the API fixtures', () => {
    const names = [
      'real-invoice-exclusive-line-discounts',
      'real-invoice-inclusive-line-discount',
      'real-invoice-multicurrency-usd',
      'real-invoices-page-1-of-2-if-modified-since',
      'real-invoices-page-2-of-2-deleted',
      'real-creditnotes-page-1-allocated-and-unallocated',
      'real-creditnote-inclusive-allocated',
    ];
    let checked = 0;
    for (const name of names) {
      const body = apiFixture(name).response.body;
      const records = [...((body.Invoices as Record<string, string>[] | undefined) ?? []), ...((body.CreditNotes as Record<string, string>[] | undefined) ?? [])];
      for (const r of records) {
        // DateString is the same midnight without a zone; UpdatedDateUTCString drops the milliseconds.
        expect(XeroDate.parse(r.Date)).toBe(`${r.DateString}Z`);
        expect(XeroDate.parse(r.UpdatedDateUTC).replace(/\.\d{3}Z$/, 'Z')).toBe(r.UpdatedDateUTCString);
        checked += 1;
      }
    }
    expect(checked).toBe(9);
  });
});

describe('parseUtcDateTime (eventDateUtc, DateString)', () => {
  it.each([
    ['2026-11-16T02:14:09.923', '2026-11-16T02:14:09.923Z'],
    ['2026-11-16T02:14:09', '2026-11-16T02:14:09Z'],
    ['2026-11-16T02:14:09Z', '2026-11-16T02:14:09Z'],
    ['2026-11-16T13:00:00+13:00', '2026-11-16T00:00:00Z'],
    ['2024-02-29T00:00:00', '2024-02-29T00:00:00Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseUtcDateTime(text)).toBe(iso);
  });

  it.each(['2026-02-30T00:00:00', '2025-02-29T00:00:00', '2026-13-01T00:00:00', '2026-11-16T24:00:00', '2026-11-16', '2026-11-16T02:14:09+25:00', '/Date(0)/'])(
    'refuses %s',
    (text) => {
      expect(parseUtcDateTime(text)).toBeUndefined();
    },
  );

  it('is accepted where Xero writes a date, as a tolerant reader', () => {
    expect(XeroDate.parse('2019-10-24T00:00:00')).toBe('2019-10-24T00:00:00Z');
    expect(XeroDate.safeParse('24/10/2019').success).toBe(false);
  });
});

describe('XeroAmount', () => {
  it.each([
    [19.95, '19.95'],
    [0.1, '0.1'],
    [62.1, '62.1'],
    [0.625, '0.625'],
    [0.937053, '0.937053'],
    [-5, '-5'],
    [0, '0'],
    [12345678901.2345, '12345678901.2345'],
    // String(n) writes numbers below 1e-6 with an exponent; 1 significant digit is as exact as any (shared readAmount).
    [1e-7, '0.0000001'],
    [1.5e-7, '0.00000015'],
    ['12.50', '12.5'],
    [' 7 ', '7'],
  ])('reads %j as %s, exactly', (value, text) => {
    const amount = XeroAmount.parse(value);
    expect(amount.equals(new Money(text))).toBe(true);
    expect(amount.constructor).toBe(Money);
  });

  it.each([
    ['a float that is not a short decimal', 0.1 + 0.2],
    ['16 significant digits', 1234567890123.456],
    ['an exponent', 1e21],
    ['a tiny exponent with more than 15 decimals', 1e-16],
    ['the smallest double', 5e-324],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an exponent string', '1e3'],
    ['16 decimals', '0.1234567890123456'],
    ['text', 'twelve'],
  ])('refuses %s', (_what, value) => {
    expect(XeroAmount.safeParse(value).success).toBe(false);
  });

  it('reads every JSON number of at most 15 significant digits as the decimal it was written as', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }), (units, scale) => {
        const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
        const text = `${units < 0n ? '-' : ''}${digits.slice(0, digits.length - scale)}${scale > 0 ? `.${digits.slice(digits.length - scale)}` : ''}`;
        const fromJson = JSON.parse(text) as number;
        expect(XeroAmount.parse(fromJson).equals(new Money(text))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('XeroGuid', () => {
  it('lowercases, so one record always has one key', () => {
    expect(XeroGuid.parse('A03FFCD2-5D91-4C7E-B483-318584E9E439')).toBe('a03ffcd2-5d91-4c7e-b483-318584e9e439');
    expect(XeroGuid.safeParse('INV-0101').success).toBe(false);
  });
});
