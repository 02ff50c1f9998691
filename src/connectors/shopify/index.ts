import { shopifyConfig } from './config.js';
import { shopifyDemo } from './demo.js';
import { defineConnector, type ParseResult, type WebhookRequest } from '../types.js';
import { toCanonicalEvents } from '../shared/canonical.js';
import { invalidFromZod, parseJsonBody } from '../shared/parse.js';
import { CONNECTOR_ID, mapShopifyCustomer, mapShopifyOrder, mapShopifyRefund, type ShopifyMapResult } from './map.js';
import { ShopifyCustomerPayload, ShopifyOrder, ShopifyRefund } from './schemas.js';
import { signShopify, verifyShopify } from './verify.js';

/** The topics taxsync reads, by the payload they carry; any other topic is acknowledged and ignored. */
export const SHOPIFY_TOPICS: ReadonlyMap<string, 'order' | 'refund' | 'customer'> = new Map([
  ['orders/create', 'order'],
  ['orders/updated', 'order'],
  ['orders/paid', 'order'],
  ['orders/cancelled', 'order'],
  ['refunds/create', 'refund'],
  ['customers/create', 'customer'],
  ['customers/update', 'customer'],
] as const);

function header(req: WebhookRequest, name: string): string | undefined {
  const value = req.headers[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function triggeredAt(req: WebhookRequest): Date | undefined {
  const value = header(req, 'x-shopify-triggered-at');
  if (value === undefined) return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

export const shopifyConnector = defineConnector({
  ...shopifyConfig,
  defaultSource: CONNECTOR_ID,
  signsTimestamp: false,
  contentTypes: ['application/json'],
  verify: verifyShopify,
  demo: shopifyDemo,
  replayHeaders: ({ topic, deliveryId }) => ({ 'x-shopify-topic': topic, 'x-shopify-event-id': deliveryId }),

  parse(req, settings): ParseResult {
    const topic = header(req, 'x-shopify-topic');
    // X-Shopify-Event-Id names the change (shared by the topics it triggers); X-Shopify-Webhook-Id
    // names one delivery and stays the same across Shopify's retries.
    const headerDeliveryId = header(req, 'x-shopify-event-id') ?? header(req, 'x-shopify-webhook-id');
    const context = { ...(topic && { topic }), ...(headerDeliveryId && { deliveryId: headerDeliveryId }) };
    if (topic === undefined) return { kind: 'invalid', ...context, message: 'missing X-Shopify-Topic header' };
    const resource = SHOPIFY_TOPICS.get(topic);
    if (resource === undefined) return { kind: 'ignored', ...context, topic, reason: `topic ${topic} is not one taxsync reads` };

    const json = parseJsonBody(req.rawBody);
    if (!json.ok) return { kind: 'invalid', ...context, message: json.message };

    let mapped: ShopifyMapResult;
    const mapContext = { source: settings.source, topic };
    if (resource === 'order') {
      const parsed = ShopifyOrder.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, context);
      mapped = mapShopifyOrder(parsed.data, mapContext);
    } else if (resource === 'refund') {
      const parsed = ShopifyRefund.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, context);
      mapped = mapShopifyRefund(parsed.data, mapContext);
    } else {
      const parsed = ShopifyCustomerPayload.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, context);
      mapped = mapShopifyCustomer(parsed.data, mapContext);
    }
    if (mapped.kind === 'ignore') return { kind: 'ignored', ...context, topic, reason: mapped.reason };

    const checked = toCanonicalEvents(mapped.events, context);
    if (!checked.ok) return checked.result;
    const at = triggeredAt(req);
    return {
      kind: 'events',
      topic,
      // Without either header (never seen from Shopify) the change itself is the dedupe key.
      deliveryId: headerDeliveryId ?? checked.events.map((e) => e.id).join(','),
      events: checked.events,
      ...(at && { triggeredAt: at }),
    };
  },

  // No timestamp is signed: `now` plays no part.
  sign: (rawBody: Buffer, secret: string, _now: Date) => signShopify(rawBody, secret),
});
