import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionsOf, type Connection, type Connections } from '../../src/config/connection-list.js';
import { CanonicalEvent } from '../../src/domain/events.js';
import type { NewDeadLetter } from '../../src/queue/dead-letter.js';

/**
 * Two WooCommerce shops whose order numbers are their own, for the operator commands' tests:
 * shop-de (no prefix) and shop-fr (prefix `fr-`), both of source woocommerce, so order 1001 is
 * woocommerce/1001 in one and woocommerce/fr-1001 in the other. The file for TAXSYNC_CONNECTIONS,
 * the same connections as the configuration resolves them (with each platform's idle default),
 * and the records and dead letters the shops leave.
 */
export const SHOPS_FILE = {
  connections: [
    { id: 'shop-de', platform: 'woocommerce' },
    // Its own VAT invoice numbers: at zero configuration both shops submit under one registration.
    { id: 'shop-fr', platform: 'woocommerce', external_id_prefix: 'fr-', vat: { invoice_number_prefix: 'FR-' } },
  ],
};

/** A TAXSYNC_CONNECTIONS file holding SHOPS_FILE; answers its path. */
export function writeShopsFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'taxsync-shops-')), 'connections.json');
  writeFileSync(file, JSON.stringify(SHOPS_FILE));
  return file;
}

const connection = (id: string, platform: string, source: string, externalIdPrefix: string, declared: boolean): Connection => ({
  id,
  platform,
  source,
  externalIdPrefix,
  webhookSecrets: [],
  api: undefined,
  declared,
});

/** The connections as `loadConnections` makes them from SHOPS_FILE: the two shops, then each platform's idle default. */
export function shopConnections(): Connections {
  return connectionsOf([
    connection('shop-de', 'woocommerce', 'woocommerce', '', true),
    connection('shop-fr', 'woocommerce', 'woocommerce', 'fr-', true),
    connection('shopify', 'shopify', 'shopify', '', false),
    connection('stripe', 'stripe', 'stripe', '', false),
    connection('woocommerce', 'woocommerce', 'woocommerce', '', false),
    connection('erp', 'erp', 'api', '', false),
  ]);
}

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

/** An order as its connection writes it: `connector` the connection's id, the external id prefixed. */
export function shopInvoice(connector: string, externalId: string, source = 'woocommerce'): CanonicalEvent {
  return CanonicalEvent.parse({
    id: `evt-${connector}-${externalId}`,
    type: 'invoice.upserted',
    occurred_at: new Date(BASE + 1000).toISOString(),
    connector,
    record: { kind: 'transaction', source, external_id: externalId },
    data: {
      issued_at: new Date(BASE).toISOString(),
      status: 'paid',
      currency: 'EUR',
      tax_inclusive: false,
      addresses: { shipping: { street: 'Hauptstr. 5', city: 'München', zip: '80331', country: 'DE' } },
      lines: [{ name: 'Teapot', unit_price: '100.00', quantity: '1' }],
      tax_total: '0.00',
    },
  });
}

/** A worker's final failure of the event's record, as the transactions worker writes it. */
export function failedInvoice(id: string, event: CanonicalEvent, at = '2026-11-21T02:40:00.000Z'): NewDeadLetter {
  return {
    id,
    queue: 'transactions',
    record: event.record,
    event: JSON.parse(JSON.stringify(event)) as unknown,
    error: { code: 'API_INVALID', message: `PUT /v1/transactions/ answered 422 for ${event.record.external_id}`, retryable: false },
    http: null,
    attempts: 1,
    first_failed_at: at,
    last_failed_at: at,
  };
}

/** A delivery the connection received but could not read, kept by ingest (no record, no event). */
export function unreadableDelivery(id: string, connector: string, at = '2026-11-21T02:30:00.000Z'): NewDeadLetter {
  return {
    id,
    queue: 'ingest',
    record: null,
    event: null,
    error: { code: 'INVALID_PAYLOAD', message: 'payload does not match the schema', retryable: false },
    http: null,
    raw: { connector, topic: 'order.updated', delivery_id: `delivery-${id}`, content_type: 'application/json', received_at: at, body: '{"id":1001}', body_truncated: false },
    attempts: 0,
    first_failed_at: at,
    last_failed_at: at,
  };
}
