import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { shopifyConnector } from '../../../src/connectors/shopify/index.js';
import type { WebhookRequest } from '../../../src/connectors/types.js';
import type { InvoiceData } from '../../../src/domain/events.js';
import { mapVatSubmission } from '../../../src/mapping/vat/index.js';
import { VatSettings, type VatSettingsInput } from '../../../src/mapping/vat-settings.js';
import { TYPES, bodies } from './vat-fixtures.js';

/**
 * Lines that are not a taxable supply (`taxable: false`: Shopify gift cards and donations) are
 * no part of the VAT submission unless vat.rate_types maps them to exempt or zero_rated. The real
 * Shopify order (test/fixtures/connectors/shopify/real-orders-create-gift-card-donation-discount.json,
 * order #1001 in USD) through the connector, then the VAT mapping of a seller registered where it
 * ships (the US, so the order is a domestic supply). Amounts worked out here by hand.
 */
const EJ = '0d000000-0000-4000-8000-000000000005';
const SECRET = 'non-taxable-lines-secret';

function fixtureInvoice(): InvoiceData {
  const fixture = JSON.parse(readFileSync(new URL('../../fixtures/connectors/shopify/real-orders-create-gift-card-donation-discount.json', import.meta.url), 'utf8')) as {
    headers: Record<string, string>;
    receivedAt: string;
    body: unknown;
  };
  const raw = Buffer.from(JSON.stringify(fixture.body));
  const when = new Date(fixture.receivedAt);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...fixture.headers, ...shopifyConnector.sign(raw, SECRET, when) })) headers[k.toLowerCase()] = v;
  const req: WebhookRequest = { headers, rawBody: raw, contentType: 'application/json', receivedAt: when };
  const parsed = shopifyConnector.parse(req, { source: 'shopify', secrets: [new Secret(SECRET)], toleranceSeconds: 300 });
  if (parsed.kind !== 'events' || parsed.events[0]?.type !== 'invoice.upserted') throw new Error('expected an invoice');
  return parsed.events[0].data;
}

const settings = (extra: Partial<VatSettingsInput> = {}) =>
  VatSettings.parse({ seller_country: 'US', registrations: [{ entity_jurisdiction: EJ, country: 'US' }], partner_name_fallback: 'Private customer', ...extra });
const map = (extra: Partial<VatSettingsInput> = {}) =>
  mapVatSubmission(fixtureInvoice(), { key: { kind: 'transaction', source: 'shopify', external_id: '450789469' }, settings: settings(extra), transactionTypes: TYPES, today: '2030-01-01' });

describe('VAT leaves out lines that are not a taxable supply', () => {
  it('files the iPod and the shipping, not the gift card (50.00) or the donation (25.00)', () => {
    const invoice = fixtureInvoice();
    expect(invoice.lines.map((l) => l.taxable)).toEqual([undefined, false, false]);
    const result = map();
    // iPod 199.00 − 10.00 discount = 189.00 at 6% (its tax 11.34 = 189.00 × 0.06); shipping 5.00
    // follows the goods at 6%: net 194.00, vat 194.00 × 0.06 = 11.64, gross 205.64.
    expect(bodies(result).map((b) => [b.invoice_number, b.net, b.vat, b.gross, b.vat_rate, b.vat_rate_type])).toEqual([['#1001', '194.00', '11.64', '205.64', '6.00', 'standard']]);
    expect(result.kind === 'send' ? result.notes : []).toContain('lines[1], lines[2] left out: not a taxable supply (taxable: false)');
  });

  it('reports a non-taxable line mapped by vat.rate_types to exempt as its own 0% part', () => {
    const result = map({ rate_types: { by_sku: { 'DONATE-25': 'exempt' } } });
    // The donation (sku DONATE-25) 25.00 at 0% exempt; the gift card (no sku) stays out.
    expect(bodies(result).map((b) => [b.invoice_number, b.net, b.vat, b.gross, b.vat_rate, b.vat_rate_type])).toEqual([
      ['#1001 (6.00% standard)', '194.00', '11.64', '205.64', '6.00', 'standard'],
      ['#1001 (0.00% exempt)', '25.00', '0.00', '25.00', '0.00', 'exempt'],
    ]);
  });

  it('ignores an invoice whose every line is not a taxable supply', () => {
    const invoice = fixtureInvoice();
    const onlyGiftCard = { ...invoice, lines: invoice.lines.filter((l) => l.taxable === false) };
    const result = mapVatSubmission(onlyGiftCard, { key: { kind: 'transaction', source: 'shopify', external_id: '450789469' }, settings: settings(), transactionTypes: TYPES, today: '2030-01-01' });
    expect(result).toMatchObject({ kind: 'ignore', reason: expect.stringMatching(/no taxable supply/) });
  });
});
