import { CONNECTOR_LIST } from '../connectors/registry.js';
import type { Connector, DemoExpected, DemoSample } from '../connectors/types.js';

/**
 * The sample deliveries of `taxsync demo`: each connector's own (`src/connectors/<id>/demo.ts`,
 * its definition's `demo`), in registry order, each tagged with the connector that sends it.
 * A connector without samples is left out.
 */

/** The id of a connector that has demo samples. */
export type DemoConnector = string;

/** One webhook delivery, before signing: the signature headers are added when it is sent. */
export type DemoDelivery = DemoSample & { connector: DemoConnector };

/** A record the demo expects in the tax engine once the daemon has synced its deliveries. */
export type DemoExpectation = DemoExpected & { connector: DemoConnector };

/**
 * A later state of a record the first deliveries created, sent once the first state went through
 * (so it is an update of what the services already hold, not coalesced with it).
 */
export interface DemoUpdate {
  delivery: DemoDelivery;
  connector: DemoConnector;
  record: 'invoice';
  external_id: string;
  /** What changed, for people. */
  change: string;
}

export interface DemoSamples {
  run: string;
  deliveries: DemoDelivery[];
  expected: DemoExpectation[];
  updates: DemoUpdate[];
}

/** The connectors the demo sends for, in registry order. */
export const DEMO_CONNECTORS: readonly DemoConnector[] = CONNECTOR_LIST.flatMap((c) => (c.demo === undefined ? [] : [c.id]));

/**
 * The samples of one run. `run` is a string of digits (Shopify and WooCommerce ids are numbers);
 * `now` dates every change a few minutes back, in the order a shop would produce them.
 * `connectors` defaults to the registry (a test adds a platform).
 */
export function buildDemoSamples(options: { run: string; now: Date; connectors?: readonly Connector[] }): DemoSamples {
  const { run, now, connectors = CONNECTOR_LIST } = options;
  if (!/^\d{1,12}$/.test(run)) throw new Error(`demo run id must be 1 to 12 digits, got ${JSON.stringify(run)}`);
  const samples: DemoSamples = { run, deliveries: [], expected: [], updates: [] };
  for (const c of connectors) {
    const part = c.demo?.({ run, now });
    if (part === undefined) continue;
    const connector = c.id;
    samples.deliveries.push(...part.deliveries.map((d) => ({ connector, ...d })));
    samples.expected.push(...part.expected.map((e) => ({ connector, ...e })));
    samples.updates.push(...(part.updates ?? []).map(({ delivery, ...u }) => ({ delivery: { connector, ...delivery }, connector, ...u })));
  }
  return samples;
}
