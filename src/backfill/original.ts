import type { Config } from '../config/index.js';
import { platformAccess } from './access.js';
import { PlatformHttpError } from './get.js';
import { fetchShopifyOrder, type BackfillDelivery } from './shopify.js';
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

/** The fetchers of the platforms whose credentials are configured (platformAccess), by connector id. */
export function originalFetchers(platforms: Config['platforms'], tuning: OriginalFetchTuning): Readonly<Record<string, OriginalFetcher>> {
  const get = { timeoutMs: tuning.timeoutMs, rateLimitRetries: tuning.rateLimitRetries, maxRetryWaitMs: tuning.maxRetryWaitMs, sleep: tuning.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))) };
  const fetchers: Record<string, OriginalFetcher> = {};
  const stripe = platformAccess(platforms, 'stripe');
  if (stripe.ok) fetchers.stripe = notFoundIsAnAnswer((id, source) => fetchStripeInvoice({ ...get, ...stripe.access }, id, source));
  const shopify = platformAccess(platforms, 'shopify');
  if (shopify.ok) fetchers.shopify = notFoundIsAnAnswer((id, source) => fetchShopifyOrder({ ...get, ...shopify.access }, id, source));
  const woocommerce = platformAccess(platforms, 'woocommerce');
  if (woocommerce.ok) fetchers.woocommerce = notFoundIsAnAnswer((id, source) => fetchWooOrder({ ...get, ...woocommerce.access }, id, source));
  return fetchers;
}
