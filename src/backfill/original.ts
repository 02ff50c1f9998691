import type { Connection } from '../config/connections.js';
import { platformIdOf, type ConnectionKeys } from '../domain/connection.js';
import { connectionAccess } from './access.js';
import { PlatformHttpError } from './get.js';
import { fetchShopifyOrder, namespacedBackfill, type BackfillDelivery } from './shopify.js';
import { fetchStripeInvoice } from './stripe.js';
import { fetchWooOrder } from './woocommerce.js';

/**
 * The platform clients that fetch ONE original (a Stripe invoice, a Shopify or WooCommerce order)
 * for a refund waiting for it, with the same GET helper, connector mapping and delivery ids as
 * `taxsync backfill`. Only the platforms whose credentials are all set have one.
 */

export type FetchedOriginal = { kind: 'found'; deliveries: BackfillDelivery[] } | { kind: 'not-found' };

/** Fetches the original of external id `externalId` and maps it for `source`; throws on any failure but a 404. */
export type OriginalFetcher = (externalId: string, source: string) => Promise<FetchedOriginal>;

export interface OriginalFetchTuning {
  /** Each call's headers and body timeout. */
  timeoutMs: number;
  /** 429s waited out (Retry-After) before giving up. */
  rateLimitRetries: number;
  /** A longer Retry-After gives up at once. */
  maxRetryWaitMs: number;
  sleep?: (ms: number) => Promise<void>;
}

/** A 404 is an answer ("the platform has no such original"), not a failure. */
function notFoundIsAnAnswer(fetch: (id: string, source: string) => Promise<BackfillDelivery[]>): OriginalFetcher {
  return async (id, source) => {
    try {
      return { kind: 'found', deliveries: await fetch(id, source) };
    } catch (error) {
      if (error instanceof PlatformHttpError && error.status === 404) return { kind: 'not-found' };
      throw error;
    }
  };
}

/**
 * The fetchers of the connections whose platform credentials are configured (connectionAccess),
 * by connection id. Each asks its own account for the platform's id (the connection's prefix taken
 * off) and writes what comes back as the connection does (docs/connections.md).
 */
export function originalFetchers(connections: readonly Connection[], tuning: OriginalFetchTuning): Readonly<Record<string, OriginalFetcher>> {
  const get = { timeoutMs: tuning.timeoutMs, rateLimitRetries: tuning.rateLimitRetries, maxRetryWaitMs: tuning.maxRetryWaitMs, sleep: tuning.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))) };
  const fetchers: Record<string, OriginalFetcher> = {};
  for (const connection of connections) {
    const access = connectionAccess(connection);
    if (access?.ok !== true) continue;
    const a = access.access;
    const fetch =
      a.platform === 'stripe'
        ? (id: string, source: string) => fetchStripeInvoice({ ...get, ...a }, id, source)
        : a.platform === 'shopify'
          ? (id: string, source: string) => fetchShopifyOrder({ ...get, ...a }, id, source)
          : (id: string, source: string) => fetchWooOrder({ ...get, ...a }, id, source);
    fetchers[connection.id] = asConnection(connection, notFoundIsAnAnswer(fetch));
  }
  return fetchers;
}

/** A platform's fetcher as `connection` asks it: the platform's own id, and what comes back namespaced. */
function asConnection(connection: ConnectionKeys, fetch: OriginalFetcher): OriginalFetcher {
  return async (externalId) => {
    const platformId = platformIdOf(externalId, connection);
    if (platformId === undefined) return { kind: 'not-found' };
    const answer = await fetch(platformId, connection.source);
    if (answer.kind !== 'found') return answer;
    return { kind: 'found', deliveries: answer.deliveries.map((d) => ({ ...d, result: namespacedBackfill(d.result, connection) })) };
  };
}
