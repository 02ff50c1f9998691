import type { CanonicalEvent } from './events.js';

/**
 * A connection is one account on one platform: a shop, a Stripe account, an ERP company, each
 * with its own secrets (docs/connections.md). Its records are written with its `source` and with
 * its `external_id_prefix` in front of every external id the platform gives, so two shops of one
 * platform (whose order numbers are per shop) never share a record. PURE.
 */
export interface ConnectionKeys {
  /** The connection's id: what `event.connector` carries for its events. */
  readonly id: string;
  readonly source: string;
  /** Put in front of every external id of the connection's records; '' for none. */
  readonly externalIdPrefix: string;
}

/** A connection's own VAT seller facts, where they differ from the settings' (docs/connections.md). */
export interface ConnectionVat {
  /** Where this shop or company is established (ships from): the settings' `vat.seller_country` for its invoices. */
  readonly establishmentCountry?: string;
  /**
   * The configured registrations it sells under, each named by its country (a domestic
   * registration), `oss`, or its reference as `taxsync vat` prints it; undefined: all of them.
   */
  readonly registrations?: readonly string[];
  /** Put in front of its VAT invoice numbers; undefined: the settings' prefix for its source. */
  readonly invoiceNumberPrefix?: string;
}

/** The most a connection's prefix may add to the platform's ids (an external id is at most 255 characters). */
export const MAX_EXTERNAL_ID_PREFIX = 32;

/**
 * The event as its connection writes it: `connector` is the connection's id, and every external id
 * it carries (the record's, its invoice's, its customer's) gets the connection's prefix. A default
 * connection (id = platform, no prefix) leaves the event exactly as it was.
 */
export function namespaceEvent(event: CanonicalEvent, connection: ConnectionKeys): CanonicalEvent {
  const prefix = connection.externalIdPrefix;
  if (prefix === '' && event.connector === connection.id) return event;
  const record = prefix === '' ? event.record : { ...event.record, external_id: prefix + event.record.external_id };
  return { ...event, connector: connection.id, record, data: prefix === '' ? event.data : prefixedData(event, prefix) } as CanonicalEvent;
}

/** The data's references to other records (a refund's invoice, an invoice's customer, an exemption's customer), prefixed. */
function prefixedData(event: CanonicalEvent, prefix: string): CanonicalEvent['data'] {
  const data = event.data as Record<string, unknown>;
  const out: Record<string, unknown> = { ...data };
  if (typeof data.invoice_external_id === 'string') out.invoice_external_id = prefix + data.invoice_external_id;
  if (typeof data.customer_external_id === 'string') out.customer_external_id = prefix + data.customer_external_id;
  const customer = data.customer as { external_id?: unknown } | undefined;
  if (customer !== undefined && typeof customer.external_id === 'string') out.customer = { ...customer, external_id: prefix + customer.external_id };
  return out;
}

/** The platform's own id of one of the connection's records (the prefix taken off), or undefined when it is not the connection's. */
export function platformIdOf(externalId: string, connection: Pick<ConnectionKeys, 'externalIdPrefix'>): string | undefined {
  return externalId.startsWith(connection.externalIdPrefix) ? externalId.slice(connection.externalIdPrefix.length) : undefined;
}

/**
 * What the source-change guard remembers of a connection (docs/operations.md, "The source-change
 * guard"): its source, and its prefix after a space when it has one, since a changed prefix
 * duplicates records as a changed source does. Without a prefix it is the source alone, as
 * remembered before connections existed. Neither a source nor a prefix holds a space.
 */
export function guardValue(connection: Pick<ConnectionKeys, 'source' | 'externalIdPrefix'>): string {
  return connection.externalIdPrefix === '' ? connection.source : `${connection.source} ${connection.externalIdPrefix}`;
}

/** The source a remembered guard value names. */
export function sourceOfGuardValue(value: string): string {
  return value.split(' ')[0] ?? value;
}
