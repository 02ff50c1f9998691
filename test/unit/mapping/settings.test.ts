import { describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { DEFAULT_MAPPING_SETTINGS, MappingSettings, deletionFor } from '../../../src/mapping/index.js';

describe('MappingSettings', () => {
  it('defaults every key from nothing', () => {
    expect(DEFAULT_MAPPING_SETTINGS).toEqual({
      tax_codes: { by_sku: {}, by_product: {} },
      manual_rates: { by_sku: {}, by_product: {} },
      override_threshold: false,
      customer_status: {},
    });
    expect(MappingSettings.parse({ tax_codes: { default: 'P0' } }).tax_codes).toEqual({ by_sku: {}, by_product: {}, default: 'P0' });
  });

  it('keeps the defaults frozen', () => {
    expect(Object.isFrozen(DEFAULT_MAPPING_SETTINGS.tax_codes.by_sku)).toBe(true);
  });

  it.each([
    ['8.25', /fraction between 0 and 1/],
    ['-0.1', /fraction between 0 and 1/],
    ['0.0825%', /decimal string/],
  ])('refuses the manual rate %s', (rate, message) => {
    const result = MappingSettings.safeParse({ manual_rates: { by_sku: { A: rate } } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['manual_rates', 'by_sku', 'A']);
    expect(result.error?.issues[0]?.message).toMatch(message);
  });

  it('refuses unknown keys, so a typo never falls back to a default', () => {
    expect(MappingSettings.safeParse({ tax_code: {} }).success).toBe(false);
    expect(MappingSettings.safeParse({ tax_codes: { bySku: {} } }).success).toBe(false);
  });

  it('refuses a shipping_from country that is not a code', () => {
    expect(MappingSettings.safeParse({ shipping_from: { country: 'Germany' } }).success).toBe(false);
  });
});

describe('deletionFor', () => {
  const event = (type: string, kind: string): CanonicalEvent =>
    CanonicalEvent.parse({
      id: 'e1',
      type,
      occurred_at: '2026-11-20T10:00:00Z',
      connector: 'erp',
      record: { kind, source: 'api', external_id: 'X-1' },
    });

  it.each([
    ['customer.deleted', 'customer', 'customers', 'source_key'],
    ['invoice.deleted', 'transaction', 'transactions', 'source_key'],
    ['refund.deleted', 'transaction', 'transactions', 'source_key'],
    ['exemption.deleted', 'exemption', 'exemptions', 'engine_id'],
  ])('%s deletes %s by key', (type, kind, resource, by) => {
    expect(deletionFor(event(type, kind))).toEqual({ resource, by, key: { kind, source: 'api', external_id: 'X-1' } });
  });

  it('is undefined for an event that is not a deletion', () => {
    expect(deletionFor(event('invoice.cancelled', 'transaction'))).toBeUndefined();
  });
});
