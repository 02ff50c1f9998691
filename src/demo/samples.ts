import type { Connections } from '../config/connections.js';
import { CONNECTOR_LIST } from '../connectors/registry.js';
import type { Connector, DemoExpected, DemoSample } from '../connectors/types.js';

/**
 * The sample deliveries of `taxsync demo`: each connector's own (`src/connectors/<id>/demo.ts`,
 * its definition's `demo`), sent to every connection of its platform that the daemon takes
 * webhooks for (docs/connections.md). Two shops of one platform get the same sample, order
 * numbers and all, as two real shops number their orders alike: each connection's prefix keeps
 * their records apart. A platform without samples, or without a connection, is left out.
 */

/** A connection the demo sends to: one of the daemon's that takes webhooks, with the secret the demo signs with. */
export interface DemoConnection {
  id: string;
  platform: string;
  source: string;
  externalIdPrefix: string;
  /** Its first webhook secret (during a rotation, the one the platform signs with first). */
  secret: string;
  /** The shop it declares: the daemon refuses a delivery that names another. */
  shop?: string;
  /** Where its secret comes from, for the message of a refused signature. */
  secretFrom: string;
}

/** One webhook delivery, before signing: the signature headers are added when it is sent. */
export type DemoDelivery = DemoSample & { connection: string; platform: string };

/**
 * A record the demo expects in the tax engine once the daemon has synced its deliveries: its
 * external ids as the connection writes them (with its prefix), and the platform's own id.
 */
export type DemoExpectation = DemoExpected & { connection: string; platform_id: string };

/**
 * A later state of a record the first deliveries created, sent once the first state went through
 * (so it is an update of what the services already hold, not coalesced with it).
 */
export interface DemoUpdate {
  delivery: DemoDelivery;
  connection: string;
  record: 'invoice';
  /** As the connection writes it (with its prefix). */
  external_id: string;
  platform_id: string;
  /** What changed, for people. */
  change: string;
}

export interface DemoSamples {
  run: string;
  deliveries: DemoDelivery[];
  expected: DemoExpectation[];
  updates: DemoUpdate[];
}

/** The platforms that have demo samples, in registry order. */
export const DEMO_CONNECTORS: readonly string[] = CONNECTOR_LIST.flatMap((c) => (c.demo === undefined ? [] : [c.id]));

/** Where a connection's secret is set, in the words of its configuration. */
function secretFrom(c: Connections['list'][number], connector: Connector): string {
  if (c.declared) return `the webhook secret of connection "${c.id}" in the TAXSYNC_CONNECTIONS file`;
  if (c.id === connector.id) return `${connector.secretVariable} (its development secret while unset)`;
  return `the development secret of connection "${c.id}"`;
}

/**
 * The connections the demo sends to: those of `connections` that take webhooks (a secret, as the
 * daemon enables them) on a platform with samples, in registry order, each platform's default
 * first. Give it the connections with their development secrets as `taxsync start` has them.
 */
export function demoConnections(connections: Connections, connectors: readonly Connector[] = CONNECTOR_LIST): DemoConnection[] {
  return connectors.flatMap((connector) => {
    if (connector.demo === undefined) return [];
    const own = connections.list.filter((c) => c.platform === connector.id && c.webhookSecrets.length > 0);
    const ordered = [...own.filter((c) => c.id === connector.id), ...own.filter((c) => c.id !== connector.id)];
    return ordered.map((c) => ({
      id: c.id,
      platform: c.platform,
      source: c.source,
      externalIdPrefix: c.externalIdPrefix,
      secret: c.webhookSecrets[0]!.reveal(),
      ...(c.shop === undefined ? {} : { shop: c.shop }),
      secretFrom: secretFrom(c, connector),
    }));
  });
}

/** Each platform's default connection with its development secret: the demo's connections when none are given. */
function platformDefaults(connectors: readonly Connector[]): DemoConnection[] {
  return connectors.flatMap((c) =>
    c.demo === undefined ? [] : [{ id: c.id, platform: c.id, source: c.defaultSource, externalIdPrefix: '', secret: c.devSecret ?? '', secretFrom: c.secretVariable }],
  );
}

/**
 * The site a connection's delivery names in the platform's shop header: the shop it declares (the
 * daemon checks it: http/webhooks.ts, wrongShop), else the sample's own, which nothing checks.
 */
const siteFor = (sampleSite: string | undefined, connection: DemoConnection): string | undefined => connection.shop ?? sampleSite;

function deliveryFor(sample: DemoSample, connection: DemoConnection, connector: Connector): DemoDelivery {
  const name = connector.shopHeader?.name;
  const key = name === undefined ? undefined : (Object.keys(sample.headers).find((k) => k.toLowerCase() === name) ?? name);
  const site = key === undefined ? undefined : siteFor(sample.headers[key], connection);
  const headers = key === undefined || site === undefined ? sample.headers : { ...sample.headers, [key]: site };
  return { ...sample, headers, connection: connection.id, platform: connection.platform };
}

/** An expected record as the connection writes it: its prefix on the record's id and on the ids it refers to. */
function expectationFor(expected: DemoExpected, connection: DemoConnection): DemoExpectation {
  const p = connection.externalIdPrefix;
  const base = { connection: connection.id, platform_id: expected.external_id };
  switch (expected.record) {
    case 'refund':
      return { ...expected, ...base, external_id: p + expected.external_id, invoice_external_id: p + expected.invoice_external_id };
    case 'exemption':
      return { ...expected, ...base, external_id: p + expected.external_id, customer_external_id: p + expected.customer_external_id };
    default:
      return { ...expected, ...base, external_id: p + expected.external_id };
  }
}

/**
 * The samples of one run. `run` is a string of digits (Shopify and WooCommerce ids are numbers);
 * `now` dates every change a few minutes back, in the order a shop would produce them.
 * `connections` defaults to each platform's default connection with its development secret;
 * `connectors` to the registry (a test adds a platform).
 */
export function buildDemoSamples(options: { run: string; now: Date; connections?: readonly DemoConnection[]; connectors?: readonly Connector[] }): DemoSamples {
  const { run, now, connectors = CONNECTOR_LIST } = options;
  const connections = options.connections ?? platformDefaults(connectors);
  if (!/^\d{1,12}$/.test(run)) throw new Error(`demo run id must be 1 to 12 digits, got ${JSON.stringify(run)}`);
  const samples: DemoSamples = { run, deliveries: [], expected: [], updates: [] };
  for (const connector of connectors) {
    const part = connector.demo?.({ run, now });
    if (part === undefined) continue;
    for (const connection of connections.filter((c) => c.platform === connector.id)) {
      samples.deliveries.push(...part.deliveries.map((d) => deliveryFor(d, connection, connector)));
      samples.expected.push(...part.expected.map((e) => expectationFor(e, connection)));
      for (const { delivery, ...u } of part.updates ?? []) {
        const external_id = connection.externalIdPrefix + u.external_id;
        samples.updates.push({ ...u, delivery: deliveryFor(delivery, connection, connector), connection: connection.id, external_id, platform_id: u.external_id });
      }
    }
  }
  return samples;
}
