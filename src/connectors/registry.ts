import { erpConnector } from './erp/index.js';
import { shopifyConnector } from './shopify/index.js';
import { stripeConnector } from './stripe/index.js';
import { woocommerceConnector } from './woocommerce/index.js';
import type { Settings } from '../config/settings.js';
import type { z } from 'zod';
import { Secret } from '../domain/secret.js';
import type { Connector } from './types.js';

/**
 * THE list of connectors: adding a platform is one folder under src/connectors/ and one line here
 * (docs/connectors.md, "Adding a platform"). Its `config.ts` gives src/config its variables, the
 * HTTP server its route `/webhooks/<id>`, its `demo.ts` the samples `taxsync demo` sends
 * (src/demo/samples.ts), and the conformance test (test/unit/connectors/conformance.test.ts)
 * picks it up with its fixtures under test/fixtures/connectors/<id>/.
 */
const REGISTERED = [shopifyConnector, stripeConnector, woocommerceConnector, erpConnector] as const;

/** The id of a registered connector: `shopify`, `stripe`, `woocommerce`, `erp`. */
export type ConnectorId = (typeof REGISTERED)[number]['id'];

/**
 * Each registered connector's platform-API settings as src/config parses them from the variables
 * its `config.ts` declares (`config.platforms.stripe.apiKey`); undefined for one without.
 */
export type PlatformApis = {
  readonly [C in (typeof REGISTERED)[number] as C['id']]: C extends { readonly platformApi: infer S extends z.ZodType } ? z.output<S> : undefined;
};

/** Every connector, in registration order (config, routes, and `taxsync status` follow it). */
export const CONNECTOR_LIST: readonly Connector[] = REGISTERED;

/** Every connector, by id. */
export const CONNECTORS: Readonly<Record<string, Connector>> = Object.fromEntries(REGISTERED.map((c) => [c.id, c]));

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

/**
 * The configured webhook secrets of `connectors`, with the development secret of each that has
 * none when `withDev` (`taxsync start` on the emulator, and `taxsync demo`, which signs as it).
 */
export function secretsWithDev(
  configured: Readonly<Record<string, readonly Secret[] | undefined>>,
  withDev: boolean,
  connectors: readonly Connector[] = CONNECTOR_LIST,
): Readonly<Record<string, readonly Secret[]>> {
  const out: Record<string, readonly Secret[]> = {};
  for (const { id, devSecret } of connectors) {
    const given = configured[id] ?? [];
    out[id] = given.length > 0 || !withDev || devSecret === undefined ? given : [new Secret(devSecret)];
  }
  return out;
}
