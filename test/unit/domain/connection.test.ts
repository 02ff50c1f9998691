import { describe, expect, it } from 'vitest';
import { namespaceEvent, platformIdOf } from '../../../src/domain/connection.js';
import { CanonicalEvent } from '../../../src/domain/events.js';

const FR = { id: 'shop-fr', source: 'woocommerce', externalIdPrefix: 'fr-' };
const at = '2026-11-20T10:00:00Z';
const refund = CanonicalEvent.parse({
  id: 'e-1',
  type: 'refund.created',
  occurred_at: at,
  connector: 'woocommerce',
  record: { kind: 'transaction', source: 'woocommerce', external_id: 'refund-1001-5' },
  data: { invoice_external_id: '1001', issued_at: at, currency: 'EUR', amount: '10', customer: { external_id: '77', name: 'Greta' } },
});

describe("a connection's namespace", () => {
  it('puts the prefix on the record and on every record the event refers to, and names the connection', () => {
    const written = namespaceEvent(refund, FR);
    expect(written.connector).toBe('shop-fr');
    expect(written.record).toEqual({ kind: 'transaction', source: 'woocommerce', external_id: 'fr-refund-1001-5' });
    expect(written.data).toMatchObject({ invoice_external_id: 'fr-1001', customer: { external_id: 'fr-77', name: 'Greta' } });
    const exemption = CanonicalEvent.parse({
      id: 'e-2',
      type: 'exemption.upserted',
      occurred_at: at,
      connector: 'erp',
      record: { kind: 'exemption', source: 'api', external_id: 'EX-1' },
      data: { customer_external_id: 'C-1', country: 'US', start_date: '2026-01-01', exemption_type: 'full' },
    });
    expect(namespaceEvent(exemption, { id: 'erp-b', source: 'api', externalIdPrefix: 'b-' }).data).toMatchObject({ customer_external_id: 'b-C-1' });
  });

  it("leaves a platform's default connection's event exactly as it is", () => {
    expect(namespaceEvent(refund, { id: 'woocommerce', source: 'woocommerce', externalIdPrefix: '' })).toBe(refund);
    // Another connection without a prefix only names itself.
    const named = namespaceEvent(refund, { id: 'shop-de', source: 'woocommerce', externalIdPrefix: '' });
    expect(named.connector).toBe('shop-de');
    expect(named.record).toBe(refund.record);
  });

  it("gives back the platform's own id of a connection's record", () => {
    expect(platformIdOf('fr-1001', FR)).toBe('1001');
    expect(platformIdOf('1001', FR)).toBeUndefined();
  });
});
