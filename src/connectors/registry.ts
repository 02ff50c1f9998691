import { erpConnector } from './erp/index.js';
import { shopifyConnector } from './shopify/index.js';
import { stripeConnector } from './stripe/index.js';
import { woocommerceConnector } from './woocommerce/index.js';
import type { Settings } from '../config/settings.js';
import type { Connector } from './types.js';

/**
 * Every connector, by id. Adding a connector is one folder under src/connectors/ and one line
 * here; the conformance test (test/unit/connectors/conformance.test.ts) picks it up with its
 * fixtures under test/fixtures/connectors/<id>/.
 */
export const CONNECTORS: Readonly<Record<string, Connector>> = {
  shopify: shopifyConnector,
  stripe: stripeConnector,
  woocommerce: woocommerceConnector,
  erp: erpConnector,
};

export function getConnector(id: string): Connector | undefined {
  return Object.hasOwn(CONNECTORS, id) ? CONNECTORS[id] : undefined;
}

/** A connector's source: from settings, else its default; never from a payload (DESIGN.md invariant 3). */
export function sourceOf(connectorId: string, settings: Settings): string {
  return settings.sources[connectorId] ?? CONNECTORS[connectorId]?.defaultSource ?? connectorId;
}

/** The development secret of each connector that has one (the zero-configuration start and `taxsync demo`). */
export const DEV_SECRETS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(CONNECTORS).flatMap((c) => (c.devSecret === undefined ? [] : [[c.id, c.devSecret]])),
);
