import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { compareTransaction } from '../../../src/reconcile/compare.js';
import type { EngineTransaction } from '../../../src/reconcile/facts.js';
import { parseSince } from '../../../src/reconcile/since.js';

const invoice = (currency: string, unitPrice: string) =>
  CanonicalEvent.parse({
    id: 'e1',
    type: 'invoice.upserted',
    occurred_at: '2026-11-20T10:00:00Z',
    connector: 'test',
    record: { kind: 'transaction', source: 'api', external_id: 'inv-1' },
    data: { issued_at: '2026-11-20T10:00:00Z', status: 'active', currency, tax_inclusive: false, lines: [{ unit_price: unitPrice, quantity: '2' }] },
  });

const engine = (currency: string, unitPrice: string, quantity = '2.000000'): EngineTransaction => ({
  id: 'tx-1',
  source: 'api',
  external_id: 'inv-1',
  transaction_type: 'invoice',
  transaction_status: 'active',
  currency,
  items: [{ unit_price: unitPrice, quantity }],
});

const compare = (held: CanonicalEvent, e: EngineTransaction | undefined) =>
  compareTransaction({ key: held.record, event: held, pending: false }, { settings: DEFAULT_SETTINGS.mapping, engine: e });

describe('reconcile: one transaction against the engine (pure)', () => {
  it('reads amounts by value, at any scale the engine writes them', () => {
    expect(compare(invoice('USD', '12.5'), engine('USD', '12.500000'))).toEqual({ outcome: 'matched' });
  });

  it('compares amounts to the currency minor unit: a cent differs, a tenth of a cent does not', () => {
    expect(compare(invoice('USD', '12.50'), engine('USD', '12.5049'))).toEqual({ outcome: 'matched' });
    const off = compare(invoice('USD', '12.50'), engine('USD', '12.51'));
    expect(off.outcome === 'finding' && off.finding.differences).toEqual([{ field: 'items[0].unit_price', taxsync: '12.50', engine: '12.51' }]);
    // JPY has no minor unit; KWD has three.
    expect(compare(invoice('JPY', '1200'), engine('JPY', '1200.4')).outcome).toBe('matched');
    expect(compare(invoice('KWD', '1.250'), engine('KWD', '1.251')).outcome).toBe('finding');
  });

  it('compares quantities exactly', () => {
    const off = compare(invoice('USD', '10.00'), engine('USD', '10.00', '3'));
    expect(off.outcome === 'finding' && off.finding.differences?.map((d) => d.field)).toEqual(['items[0].quantity']);
  });

  it('a record not in the engine is missing; a pending one is not compared', () => {
    expect(compare(invoice('USD', '10.00'), undefined)).toMatchObject({ outcome: 'finding', finding: { kind: 'missing' } });
    const held = invoice('USD', '10.00');
    expect(compareTransaction({ key: held.record, event: held, pending: true }, { settings: DEFAULT_SETTINGS.mapping, engine: undefined })).toEqual({ outcome: 'pending' });
  });
});

describe('--since', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  it('takes a date, a date-time with zone, or an age', () => {
    expect(parseSince('2026-11-01', now).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseSince('2026-11-01T08:30:00+01:00', now).toISOString()).toBe('2026-11-01T07:30:00.000Z');
    expect(parseSince('6h', now).toISOString()).toBe('2026-11-25T06:00:00.000Z');
    expect(parseSince('7d', now).toISOString()).toBe('2026-11-18T12:00:00.000Z');
  });
  it('refuses a date-time without zone and nonsense', () => {
    expect(() => parseSince('2026-11-01T08:00:00', now)).toThrow(/date-time with a zone/);
    expect(() => parseSince('2026-02-30', now)).toThrow();
    expect(() => parseSince('yesterday', now)).toThrow();
  });
});
