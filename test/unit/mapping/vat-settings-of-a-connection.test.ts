import { describe, expect, it } from 'vitest';
import { mapVatSubmission } from '../../../src/mapping/vat/index.js';
import { vatSettingsFor } from '../../../src/mapping/vat-settings.js';
import { EJ_DE, EJ_OSS, TODAY, TYPES, consumerIn, vatInvoice, vatSettings } from './vat-fixtures.js';

/**
 * A connection's own VAT seller facts (docs/connections.md, "VAT") over the settings': where it is
 * established, the registrations it sells under, the prefix of its invoice numbers.
 */
const key = { kind: 'transaction' as const, source: 'woocommerce', external_id: 'fr-1001' };
const map = (settings: ReturnType<typeof vatSettings>, country: string) =>
  mapVatSubmission(vatInvoice({ number: '1001', ...consumerIn(country) }), { key, settings, transactionTypes: TYPES, today: TODAY });

describe("a connection's VAT settings", () => {
  it('are the settings unchanged without facts of its own', () => {
    const settings = vatSettings();
    expect(vatSettingsFor(settings, 'woocommerce', undefined)).toBe(settings);
  });

  it('number its invoices with its own prefix, for its source only', () => {
    const settings = vatSettingsFor(vatSettings({ invoice_number: { prefix_by_source: { api: 'ERP-' } } }), 'woocommerce', { invoiceNumberPrefix: 'FR-' });
    expect(settings.invoice_number.prefix_by_source).toEqual({ api: 'ERP-', woocommerce: 'FR-' });
    const result = map(settings, 'DE');
    expect(result.kind === 'send' && result.body.map((b) => b.invoice_number)).toEqual(['FR-1001']);
  });

  it('sell under the registrations it names only: a German consumer without its German registration is outside them', () => {
    const ossOnly = vatSettingsFor(vatSettings(), 'woocommerce', { registrations: ['oss'] });
    expect(ossOnly.registrations.map((r) => r.entity_jurisdiction)).toEqual([EJ_OSS]);
    const all = map(vatSettings(), 'DE');
    expect(all.kind === 'send' && all.body[0]!.entity_jurisdiction).toBe(EJ_DE);
    expect(map(ossOnly, 'DE').kind).not.toBe('send');
  });

  it('take its establishment country as the seller’s: a French shop selling to a French consumer is outside a German seller’s registrations', () => {
    // The German seller (domestic DE, OSS) selling to France: an EU distance sale through the OSS.
    const german = map(vatSettings(), 'FR');
    expect(german.kind === 'send' && german.body[0]!.entity_jurisdiction).toBe(EJ_OSS);
    // The same sale from a shop established in France is a domestic French sale: no registration covers it.
    const french = map(vatSettingsFor(vatSettings(), 'woocommerce', { establishmentCountry: 'FR' }), 'FR');
    expect(french.kind).not.toBe('send');
  });
});
