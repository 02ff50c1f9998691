import { namespaceEvents } from '../connectors/namespace.js';
import type { ConnectionKeys } from '../domain/connection.js';
import LinkHeader from 'http-link-header';
import { z } from 'zod';
import type { CanonicalEvent } from '../domain/events.js';
import type { Secret } from '../domain/secret.js';
import { toCanonicalEvents } from '../connectors/shared/canonical.js';
import { mapShopifyOrder, mapShopifyRefund, type ShopifyMapResult } from '../connectors/shopify/map.js';
import { ShopifyOrder, ShopifyRefund } from '../connectors/shopify/schemas.js';
import { platformGet, type PlatformGetOptions } from './get.js';
import { describeIssues } from '../domain/field-errors.js';

/**
 * Shopify's Admin REST API for `taxsync backfill --source shopify`: the orders updated since a
 * time (`GET <SHOPIFY_API_URL>/orders.json?status=any&updated_at_min=…&limit=250`), paged by the
 * `Link` header's `rel="next"` URL and its `page_info` (Shopify, "Make paginated requests to the
 * REST Admin API": a page_info request carries only `limit` besides it). Shopify's REST limit is a
 * leaky bucket reported as `X-Shopify-Shop-Api-Call-Limit: used/size`, draining two calls a
 * second: within two calls of full, the next call waits a second; a 429 is waited out
 * (`Retry-After` seconds, else one second doubling) a few times.
 */

export const ShopifyOrderList = z.looseObject({
  orders: z.array(z.looseObject({ id: z.union([z.number().int().positive(), z.string().min(1)]) })),
});

export interface OrderPage {
  orders: Record<string, unknown>[];
  /** The cursor of the next page (Shopify's page_info, WooCommerce's page number); undefined on the last page. */
  next: string | undefined;
}

export interface OrderLister {
  /** One page of the orders changed at or after `since`; `cursor` undefined: the first page. */
  page(since: Date, cursor: string | undefined): Promise<OrderPage>;
}

const PAGE_SIZE = '250';

export function createShopifyLister(options: { apiUrl: string; accessToken: Secret; sleep?: (ms: number) => Promise<void> }): OrderLister {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const ordersUrl = new URL(`${options.apiUrl.replace(/\/+$/, '')}/orders.json`);
  let waitBeforeNext = 0;
  return {
    async page(since, pageInfo) {
      const url = new URL(ordersUrl);
      url.searchParams.set('limit', PAGE_SIZE);
      if (pageInfo === undefined) {
        url.searchParams.set('status', 'any');
        url.searchParams.set('updated_at_min', since.toISOString());
      } else url.searchParams.set('page_info', pageInfo);
      const res = await platformGet(url, {
        platform: 'Shopify',
        headers: shopifyHeaders(options.accessToken),
        sleep,
        before: async () => {
          if (waitBeforeNext > 0) await sleep(waitBeforeNext);
          waitBeforeNext = 0;
        },
        after: (headers) => {
          waitBeforeNext = bucketWait(headers['x-shopify-shop-api-call-limit']);
        },
      });
      const parsed = ShopifyOrderList.safeParse(res.body);
      if (!parsed.success) throw new Error(`Shopify's ${ordersUrl.pathname} answer is not an order list: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
      return { orders: parsed.data.orders, next: nextPageInfo(res.headers.link, ordersUrl) };
    },
  };
}

const shopifyHeaders = (accessToken: Secret) => ({ 'x-shopify-access-token': accessToken.reveal(), accept: 'application/json' });

/**
 * `GET <SHOPIFY_API_URL>/orders/<id>.json` (a waiting refund's original, Shopify "Retrieve a
 * specific order"): `{order}`, as the deliveries a backfill makes of it (the order, its refunds).
 */
export async function fetchShopifyOrder(
  options: { apiUrl: string; accessToken: Secret } & Pick<PlatformGetOptions, 'sleep' | 'rateLimitRetries' | 'maxRetryWaitMs' | 'timeoutMs'>,
  id: string,
  source: string,
): Promise<BackfillDelivery[]> {
  const url = new URL(`${options.apiUrl.replace(/\/+$/, '')}/orders/${encodeURIComponent(id)}.json`);
  const res = await platformGet(url, { ...options, platform: 'Shopify', headers: shopifyHeaders(options.accessToken) });
  const parsed = z.looseObject({ order: ShopifyOrderList.shape.orders.element }).safeParse(res.body);
  if (!parsed.success) throw new Error(`Shopify's ${url.pathname} answer is not an order: ${describeIssues(parsed.error.issues, { limit: 3 })}`);
  return shopifyBackfillDeliveries(parsed.data.order, source);
}

/** A second when the bucket is within two calls of full (it drains two a second), else none. */
function bucketWait(header: string | string[] | undefined): number {
  const match = typeof header === 'string' ? /^(\d+)\/(\d+)$/.exec(header.trim()) : null;
  if (!match) return 0;
  return Number(match[2]) - Number(match[1]) <= 2 ? 1000 : 0;
}

/** The page_info of the `rel="next"` link, which must point at the same endpoint (the token goes with it). */
function nextPageInfo(header: string | string[] | undefined, ordersUrl: URL): string | undefined {
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  const next = LinkHeader.parse(header).rel('next')[0];
  if (next === undefined) return undefined;
  const url = new URL(next.uri, ordersUrl);
  if (url.origin !== ordersUrl.origin || url.pathname !== ordersUrl.pathname) {
    throw new Error(`Shopify's next page ${url.origin}${url.pathname} is not ${ordersUrl.origin}${ordersUrl.pathname}: not followed`);
  }
  const pageInfo = url.searchParams.get('page_info');
  if (pageInfo === null || pageInfo === '') throw new Error('Shopify\'s rel="next" link has no page_info');
  return pageInfo;
}

export type BackfillMapResult = { kind: 'events'; events: CanonicalEvent[] } | { kind: 'ignored'; reason: string } | { kind: 'invalid'; message: string };

/** A backfilled object's events as its connection writes them (namespaceEvents); one the prefix makes invalid makes the object invalid. */
export function namespacedBackfill(result: BackfillMapResult, connection: ConnectionKeys): BackfillMapResult {
  if (result.kind !== 'events') return result;
  const { events, problems } = namespaceEvents(result.events, connection);
  return problems.length === 0 ? { kind: 'events', events } : { kind: 'invalid', message: problems.map((p) => p.message).join('; ') };
}

/** One delivery a backfilled object stands for: its id (dedupe) and what the connector maps it to. */
export interface BackfillDelivery {
  objectId: string;
  id: string;
  result: BackfillMapResult;
}

function checked(mapped: ShopifyMapResult, label: string): BackfillMapResult {
  if (mapped.kind === 'ignore') return { kind: 'ignored', reason: mapped.reason };
  const events = toCanonicalEvents(mapped.events, {});
  if (events.ok) return { kind: 'events', events: events.events };
  return { kind: 'invalid', message: `${label}: ${events.result.kind === 'invalid' ? events.result.message : 'unreadable'}` };
}

/** The delivery id a webhook without Shopify's id headers gets: the change's own event ids. */
function deliveryId(result: BackfillMapResult, fallback: string): string {
  return result.kind === 'events' ? result.events.map((e) => e.id).join(',') : fallback;
}

/**
 * PURE: a listed order as the webhooks that would have carried it, mapped by the Shopify
 * connector: the order as `orders/updated`, then each refund of its `refunds` array as
 * `refunds/create` (the order's own mapping never reads `refunds`: they are linked refund events).
 */
export function shopifyBackfillDeliveries(order: Record<string, unknown>, source: string): BackfillDelivery[] {
  const orderId = String(order.id);
  const parsedOrder = ShopifyOrder.safeParse(order);
  const orderResult: BackfillMapResult = parsedOrder.success
    ? checked(mapShopifyOrder(parsedOrder.data, { source, topic: 'orders/updated' }), `order ${orderId}`)
    : { kind: 'invalid', message: `order ${orderId}: ${describeIssues(parsedOrder.error.issues, { whole: '(order)', limit: 3 })}` };
  const out: BackfillDelivery[] = [{ objectId: orderId, id: deliveryId(orderResult, `backfill:orders:${orderId}`), result: orderResult }];
  const refunds = Array.isArray(order.refunds) ? (order.refunds as unknown[]) : [];
  for (const refund of refunds) {
    const rawId = (refund as { id?: unknown } | null)?.id;
    const refundId = typeof rawId === 'number' || typeof rawId === 'string' ? String(rawId) : '?';
    const parsed = ShopifyRefund.safeParse(refund);
    const result: BackfillMapResult = parsed.success
      ? checked(mapShopifyRefund(parsed.data, { source, topic: 'refunds/create' }), `refund ${refundId}`)
      : { kind: 'invalid', message: `refund ${refundId} of order ${orderId}: ${describeIssues(parsed.error.issues, { whole: '(refund)', limit: 3 })}` };
    out.push({ objectId: `refund ${refundId}`, id: deliveryId(result, `backfill:refunds:${refundId}`), result });
  }
  return out;
}
