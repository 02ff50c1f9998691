import { describe, expect, it } from 'vitest';
import type { CanonicalEventInput } from '../../../../src/domain/events.js';
import { Money } from '../../../../src/domain/money.js';
import { canonicalOrInvalid } from '../../../../src/connectors/shared/canonical.js';
import { countryCode } from '../../../../src/connectors/shared/countries.js';
import { ExactAmount, GmtDateTime, isCalendarDateTime, nonEmpty, readAmount, utcTimestamp } from '../../../../src/connectors/shared/fields.js';

/** What Xero and QuickBooks now read with one helper each: amounts, calendar dates, countries, canonical events. */

describe('readAmount (Xero and QuickBooks amounts)', () => {
  it.each([
    [19.95, '19.95'],
    [0.9090889, '0.9090889'],
    [1e-7, '0.0000001'],
    [123456789012345, '123456789012345'],
    [-0, '0'],
    ['  12.50 ', '12.5'],
    ['0.123456789012345', '0.123456789012345'],
  ])('reads %j as %s exactly', (value, text) => {
    const read = readAmount(value);
    expect(read).toMatchObject({ ok: true });
    expect(read.ok && read.amount.equals(new Money(text))).toBe(true);
    expect(ExactAmount.parse(value).equals(new Money(text))).toBe(true);
  });

  it.each([
    ['a number whose shortest form has 17 digits', 0.1 + 0.2, true],
    ['an integer of 16 digits (trailing zeros count)', 1e15, true],
    ['an exponent string', '1e5', false],
    ['a string with 19 decimals', '0.1234567890123456789', false],
    ['the smallest double (324 decimals)', 5e-324, false],
    ['a number of 22 integer digits (String writes 1e+21; its zeros count)', 1e21, true],
    ['a string of 19 integer digits', '1234567890123456789', false],
    ['NaN', Number.NaN, false],
    ['Infinity', Number.NEGATIVE_INFINITY, false],
    ['text', 'twelve', false],
    ['a blank string', ' ', false],
  ])('refuses %s: %j (inexact: %s)', (_what, value, inexact) => {
    const read = readAmount(value);
    expect(read).toMatchObject({ ok: false, inexact });
    expect(ExactAmount.safeParse(value).success).toBe(false);
  });
});

describe('isCalendarDateTime', () => {
  it.each(['2024-02-29T00:00:00', '2026-12-31T23:59:59Z', '2026-11-18T09:00-08:00', '2000-02-29T12:00:00.5'])('accepts %s', (text) => {
    expect(isCalendarDateTime(text)).toBe(true);
  });

  it.each(['2026-02-30T10:00:00', '2025-02-29T00:00:00', '1900-02-29T00:00:00', '2026-04-31T00:00:00', '2026-00-10T00:00:00', '2026-13-01T00:00:00', '2026-11-16T24:00:00', '2026-11-16T23:60:00', '2026-11-16T23:59:60', '2026-11-16', 'soon'])(
    'refuses %s',
    (text) => {
      expect(isCalendarDateTime(text)).toBe(false);
    },
  );
});

describe('GmtDateTime (WooCommerce *_gmt)', () => {
  it('refuses 30 February and 24:00 instead of rolling them over into the next month or day', () => {
    expect(GmtDateTime.safeParse('2026-02-30T10:00:00').success).toBe(false);
    expect(GmtDateTime.safeParse('2026-02-30T10:00:00Z').success).toBe(false);
    expect(GmtDateTime.safeParse('2026-11-20T24:00:00').success).toBe(false);
  });

  it('still reads a real date, a leap day included, as UTC', () => {
    expect(GmtDateTime.parse('2024-02-29T10:00:00')).toBe('2024-02-29T10:00:00Z');
    expect(GmtDateTime.parse('2026-11-20T10:00:00Z')).toBe('2026-11-20T10:00:00Z');
  });
});

describe('utcTimestamp', () => {
  it('writes milliseconds and date-times alike', () => {
    expect(utcTimestamp(1573755038314)).toBe('2019-11-14T18:10:38.314Z');
    expect(utcTimestamp(0)).toBe('1970-01-01T00:00:00Z');
    expect(utcTimestamp('2026-11-18T09:00:00-08:00')).toBe('2026-11-18T17:00:00Z');
  });
});

describe('countryCode (Xero and QuickBooks address Country)', () => {
  it.each([
    ['Spain', 'ES'],
    ['spain', 'ES'],
    ['ES', 'ES'],
    ['USA', 'US'],
    ['U.S.A.', 'US'],
    ['U.S.', 'US'],
    ['UNITED STATES', 'US'],
    ['CAN', 'CA'],
    ['GBR', 'GB'],
    ['DEU', 'DE'],
    ['England', 'GB'],
    ['Myanmar (Burma)', 'MM'],
    ['Congo - Kinshasa', 'CD'],
  ])('reads %j as %s', (text, code) => {
    expect(countryCode(text)).toBe(code);
  });

  it.each(['ZZ', 'EU', 'XK', 'AA', 'QO', 'DD', 'Deutschland', 'Atlantis', '  ', null, undefined])('knows no country in %j', (text) => {
    expect(countryCode(text)).toBeUndefined();
  });
});

describe('nonEmpty', () => {
  it('is undefined for an object without keys, else the object itself', () => {
    const address = { city: 'Austin' };
    expect(nonEmpty({})).toBeUndefined();
    expect(nonEmpty(address)).toBe(address);
  });
});

describe('canonicalOrInvalid', () => {
  const event: CanonicalEventInput = {
    id: 'x:1',
    type: 'customer.upserted',
    occurred_at: '2026-11-18T17:00:00Z',
    connector: 'x',
    record: { kind: 'customer', source: 'x', external_id: '1' },
    data: { name: 'Ana' },
  };
  // Not canonical on purpose: a name must be a string.
  const bad = { ...event, data: { name: 42 } } as unknown as CanonicalEventInput;

  it('answers the events when every one is canonical', () => {
    const result = canonicalOrInvalid([event]);
    expect(result.kind).toBe('events');
    expect(result.kind === 'events' && result.events.map((e) => e.id)).toEqual(['x:1']);
  });

  it('names the failing field under event. (event[i]. when a record maps to several)', () => {
    const one = canonicalOrInvalid([bad]);
    expect(one).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^the mapped event does not match the canonical schema: /) });
    expect(one.kind === 'invalid' && Object.keys(one.fields)).toEqual(['event.data.name']);
    const two = canonicalOrInvalid([event, bad]);
    expect(two.kind === 'invalid' && Object.keys(two.fields)).toEqual(['event[1].data.name']);
  });
});
