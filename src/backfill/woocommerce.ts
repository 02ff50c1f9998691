import { z } from 'zod';
import type { Secret } from '../domain/secret.js';
import { toCanonicalEvents } from '../connectors/shared/canonical.js';
import { mapWooOrder, orderDeliveryId } from '../connectors/woocommerce/map.js';
import { WooOrder } from '../connectors/woocommerce/schemas.js';
import { platformGet, type PlatformGetOptions } from './get.js';
import type { BackfillDelivery, OrderLister } from './shopify.js';
import { describeIssues } from '../domain/field-errors.js';

/**
 * WooCommerce's REST API for `taxsync backfill --source woocommerce`: the orders modified since a
 * time (`GET <WOOCOMMERCE_API_URL>/wp-json/wc/v3/orders?modified_after=…&per_page=100&page=N`,
 * WooCommerce REST API docs, "List all orders"), paged by number up to `X-WP-TotalPages`, with
 * HTTP basic auth of the consumer key and secret (over HTTPS). The REST API sends no rate-limit
 * header and has no limit of its own (the site's host or a security plugin may answer 429): the
 * lister pauses `pagePauseMs` (WOOCOMMERCE_API_PAGE_PAUSE_MS) between pages, and a 429 is waited
 * out by its Retry-After (else one second, doubling) as for the others.
 */

export const WooOrderList = z.array(z.looseObject({ id: z.union([z.number().int().positive(), z.string().min(1)]) }));

export function createWooLister(options: { apiUrl: string; consumerKey: Secret; consumerSecret: Secret; pagePauseMs?: number; sleep?: (ms: number) => Promise<void> }): OrderLister {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let listedBefore = false;
  // Before every page but the first, so a single-page backfill costs no pause.
  const pace = async () => {
    if (listedBefore && (options.pagePauseMs ?? 0) > 0) await sleep(options.pagePauseMs!);
    listedBefore = true;
  };
  const ordersUrl = new URL(`${options.apiUrl.replace(/\/+$/, '')}/wp-json/wc/v3/orders`);
  return {
    async page(since, cursor) {
      const page = cursor === undefined ? 1 : Number(cursor);
      const url = new URL(ordersUrl);
      // WooCommerce reads modified_after in the site's time zone unless dates_are_gmt is set.
      url.searchParams.set('modified_after', since.toISOString().replace(/\.\d{3}Z$/, ''));
      url.searchParams.set('dates_are_gmt', 'true');
      url.searchParams.set('orderby', 'id');
      url.searchParams.set('order', 'asc');
      url.searchParams.set('per_page', '100');
      url.searchParams.set('page', String(page));
      await pace();
      const res = await platformGet(url, { platform: 'WooCommerce', headers: wooHeaders(options), sleep });
      const parsed = WooOrderList.safeParse(res.body);
      if (!parsed.success) throw new Error(`WooCommerce's ${ordersUrl.pathname} answer is not an order list: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
      const total = Number(res.headers['x-wp-totalpages']);
      return { orders: parsed.data, next: Number.isInteger(total) && page < total ? String(page + 1) : undefined };
    },
  };
}

const wooHeaders = (options: { consumerKey: Secret; consumerSecret: Secret }) => ({
  authorization: `Basic ${Buffer.from(`${options.consumerKey.reveal()}:${options.consumerSecret.reveal()}`).toString('base64')}`,
  accept: 'application/json',
});

/**
 * `GET <WOOCOMMERCE_API_URL>/wp-json/wc/v3/orders/<id>` (a waiting refund's original,
 * WooCommerce REST API docs "Retrieve an order"): the order as the `order.updated` delivery.
 */
export async function fetchWooOrder(
  options: { apiUrl: string; consumerKey: Secret; consumerSecret: Secret } & Pick<PlatformGetOptions, 'sleep' | 'rateLimitRetries' | 'maxRetryWaitMs' | 'timeoutMs'>,
  id: string,
  source: string,
): Promise<BackfillDelivery[]> {
  const url = new URL(`${options.apiUrl.replace(/\/+$/, '')}/wp-json/wc/v3/orders/${encodeURIComponent(id)}`);
  const res = await platformGet(url, { ...options, platform: 'WooCommerce', headers: wooHeaders(options) });
  const parsed = WooOrderList.element.safeParse(res.body);
  if (!parsed.success) throw new Error(`WooCommerce's ${url.pathname} answer is not an order: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
  return wooBackfillDeliveries(parsed.data, source);
}

/**
 * PURE: a listed order as the `order.updated` webhook that would have carried it, mapped by the
 * WooCommerce connector (whose order mapping reads the order's `refunds` itself) with the same
 * delivery id, so a state a webhook already delivered is a duplicate delivery.
 */
export function wooBackfillDeliveries(order: Record<string, unknown>, source: string): BackfillDelivery[] {
  const objectId = String(order.id);
  const parsed = WooOrder.safeParse(order);
  if (!parsed.success) {
    return [{ objectId, id: `backfill:orders:${objectId}`, result: { kind: 'invalid', message: `order ${objectId}: ${describeIssues(parsed.error.issues, { whole: '(order)', limit: 3 })}` } }];
  }
  const id = orderDeliveryId(parsed.data);
  const mapped = mapWooOrder(parsed.data, { source, topic: 'order.updated' });
  if (mapped.kind === 'ignore') return [{ objectId, id, result: { kind: 'ignored', reason: mapped.reason } }];
  const events = toCanonicalEvents(mapped.events, { deliveryId: id });
  const result = events.ok ? { kind: 'events' as const, events: events.events } : { kind: 'invalid' as const, message: `order ${objectId}: ${events.result.kind === 'invalid' ? events.result.message : 'unreadable'}` };
  return [{ objectId, id, result }];
}
