import { invalidFromZod, parseJsonBody } from '../shared/parse.js';
import { stripeConfig } from './config.js';
import { stripeDemo } from './demo.js';
import { defineConnector, type ConnectorSettings, type ParseResult, type WebhookRequest } from '../types.js';
import { CONNECTOR_ID, STRIPE_EVENT_TYPES, isHandledType, mapCreditNoteEvent, mapCustomerEvent, mapInvoiceEvent, type StripeMapResult } from './map.js';
import { StripeCreditNoteEvent, StripeCustomerEvent, StripeEventEnvelope, StripeInvoiceEvent } from './schemas.js';
import { signStripe, verifyStripe } from './verify.js';

/**
 * Stripe webhooks (POST /webhooks/stripe): invoices, credit notes and customers. The endpoint's
 * signing secret (`whsec_…`) is STRIPE_WEBHOOK_SECRET. docs/connectors-stripe-erp.md has the
 * events handled and the mapping rules.
 */
export const stripeConnector = defineConnector({
  ...stripeConfig,
  defaultSource: CONNECTOR_ID,
  signsTimestamp: true,
  contentTypes: ['application/json'],
  verify: verifyStripe,
  demo: stripeDemo,
  parse: parseStripe,
  sign: signStripe,
});

function parseStripe(req: WebhookRequest, settings: ConnectorSettings): ParseResult {
  const json = parseJsonBody(req.rawBody);
  if (!json.ok) return { kind: 'invalid', message: json.message };
  const head = StripeEventEnvelope.safeParse(json.value);
  if (!head.success) return invalidFromZod(head.error, {});
  const { id: deliveryId, type: topic } = head.data;
  if (!isHandledType(topic)) return { kind: 'ignored', topic, deliveryId, reason: `Stripe event type ${topic} is not used by taxsync` };

  const ctx = { source: settings.source };
  let mapped: StripeMapResult;
  switch (STRIPE_EVENT_TYPES[topic]) {
    case 'invoice': {
      const event = StripeInvoiceEvent.safeParse(json.value);
      if (!event.success) return invalidFromZod(event.error, { topic, deliveryId });
      mapped = mapInvoiceEvent(event.data, ctx);
      break;
    }
    case 'credit_note': {
      const event = StripeCreditNoteEvent.safeParse(json.value);
      if (!event.success) return invalidFromZod(event.error, { topic, deliveryId });
      mapped = mapCreditNoteEvent(event.data, ctx);
      break;
    }
    case 'customer': {
      const event = StripeCustomerEvent.safeParse(json.value);
      if (!event.success) return invalidFromZod(event.error, { topic, deliveryId });
      mapped = mapCustomerEvent(event.data, ctx);
      break;
    }
  }
  switch (mapped.kind) {
    case 'events':
      return { kind: 'events', topic, deliveryId, events: mapped.events };
    case 'ignored':
      return { kind: 'ignored', topic, deliveryId, reason: mapped.reason };
    case 'invalid':
      return { kind: 'invalid', topic, deliveryId, message: mapped.message, ...(mapped.fields ? { fields: mapped.fields } : {}) };
  }
}
