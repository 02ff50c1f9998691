import { woocommerceConfig } from './config.js';
import { woocommerceDemo } from './demo.js';
import { defineConnector, type ParseResult, type WebhookRequest } from '../types.js';
import { toCanonicalEvents } from '../shared/canonical.js';
import { invalidFromZod, parseJsonBody } from '../shared/parse.js';
import {
  CONNECTOR_ID,
  customerDeliveryId,
  mapWooCustomer,
  mapWooOrder,
  mapWooOrderDeleted,
  orderDeliveryId,
  wooDeliveryId,
  type WooMapResult,
} from './map.js';
import { WooCustomer, WooDeleted, WooOrder } from './schemas.js';
import { isWooPing, signWoo, verifyWoo } from './verify.js';

/** The topics taxsync reads; any other topic is acknowledged and ignored. */
export const WOO_TOPICS: ReadonlyMap<string, 'order' | 'order-deleted' | 'customer'> = new Map([
  ['order.created', 'order'],
  ['order.updated', 'order'],
  ['order.deleted', 'order-deleted'],
  ['customer.created', 'customer'],
  ['customer.updated', 'customer'],
] as const);

function header(req: WebhookRequest, name: string): string | undefined {
  const value = req.headers[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export const woocommerceConnector = defineConnector({
  ...woocommerceConfig,
  defaultSource: CONNECTOR_ID,
  signsTimestamp: false,
  contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
  isPing: isWooPing,
  verify: verifyWoo,
  demo: woocommerceDemo,
  replayHeaders: ({ topic, deliveryId }) => ({ 'x-wc-webhook-topic': topic, 'x-wc-webhook-delivery-id': deliveryId }),

  parse(req, settings): ParseResult {
    const topic = header(req, 'x-wc-webhook-topic');
    if (topic === undefined) return { kind: 'invalid', message: 'missing X-WC-Webhook-Topic header' };
    const resource = WOO_TOPICS.get(topic);
    if (resource === undefined) {
      const delivery = header(req, 'x-wc-webhook-delivery-id');
      return { kind: 'ignored', topic, reason: `topic ${topic} is not one taxsync reads`, ...(delivery && { deliveryId: delivery }) };
    }

    const json = parseJsonBody(req.rawBody);
    if (!json.ok) return { kind: 'invalid', topic, message: json.message };

    let deliveryId: string;
    let mapped: WooMapResult;
    const mapContext = { source: settings.source, topic };
    if (resource === 'order') {
      const parsed = WooOrder.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, { topic });
      deliveryId = orderDeliveryId(parsed.data);
      mapped = mapWooOrder(parsed.data, mapContext);
    } else if (resource === 'order-deleted') {
      const parsed = WooDeleted.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, { topic });
      deliveryId = wooDeliveryId('order', parsed.data.id, 'deleted');
      mapped = mapWooOrderDeleted(parsed.data, { ...mapContext, receivedAt: req.receivedAt.toISOString() });
    } else {
      const parsed = WooCustomer.safeParse(json.value);
      if (!parsed.success) return invalidFromZod(parsed.error, { topic });
      deliveryId = customerDeliveryId(parsed.data);
      mapped = mapWooCustomer(parsed.data, mapContext);
    }
    if (mapped.kind === 'ignore') return { kind: 'ignored', topic, deliveryId, reason: mapped.reason };

    const checked = toCanonicalEvents(mapped.events, { topic, deliveryId });
    if (!checked.ok) return checked.result;
    return { kind: 'events', topic, deliveryId, events: checked.events };
  },

  // No timestamp is signed: `now` plays no part.
  sign: (rawBody: Buffer, secret: string, _now: Date) => signWoo(rawBody, secret),
});
