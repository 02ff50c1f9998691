import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { CanonicalEvent, EVENT_TYPES, parseCanonicalEvent } from '../../../src/domain/events.js';
import { parseRecordKeyString, recordKeyString } from '../../../src/domain/record-key.js';

const invoice = {
  id: 'shopify:orders/updated:evt-1',
  type: 'invoice.upserted',
  occurred_at: '2026-11-20T10:00:00Z',
  connector: 'shopify',
  record: { kind: 'transaction', source: 'shopify', external_id: '1001' },
  data: {
    issued_at: '2026-11-20T09:59:00Z',
    status: 'paid',
    currency: 'USD',
    tax_inclusive: false,
    lines: [{ unit_price: '19.99', quantity: '2', discount: '1.00', sku: 'TSHIRT' }],
    shipping: { amount: '5.00' },
  },
};

describe('canonical events', () => {
  it('reads amounts as decimals and writes them back as strings', () => {
    const parsed = CanonicalEvent.parse(invoice);
    expect(parsed.v).toBe(1);
    if (parsed.type !== 'invoice.upserted') throw new Error('wrong type');
    expect(parsed.data.lines[0]!.unit_price).toBeInstanceOf(Decimal);
    const wire = JSON.parse(JSON.stringify(parsed)) as typeof invoice;
    expect(wire.data.lines[0]!.unit_price).toBe('19.99');
    expect(CanonicalEvent.parse(wire)).toEqual(parsed);
  });

  it('refuses an amount given as a number, naming the field', () => {
    const bad = structuredClone(invoice) as unknown as { data: { lines: { unit_price: unknown }[] } };
    bad.data.lines[0]!.unit_price = 19.99;
    const result = parseCanonicalEvent(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['data', 'lines', 0, 'unit_price']);
  });

  it('refuses a record kind that does not fit the event type', () => {
    const result = parseCanonicalEvent({ ...invoice, record: { ...invoice.record, kind: 'customer' } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/must be transaction/);
  });

  it('knows every documented event type', () => {
    expect(EVENT_TYPES).toEqual(
      expect.arrayContaining(['customer.upserted', 'invoice.cancelled', 'refund.created', 'refund.cancelled', 'exemption.upserted']),
    );
  });

  it('gives record keys a string form that survives colons in external ids', () => {
    const key = { kind: 'transaction' as const, source: 'erp', external_id: 'INV:2026:7' };
    expect(parseRecordKeyString(recordKeyString(key))).toEqual(key);
  });
});
