import { invalidFromZod, parseJsonBody } from '../shared/parse.js';
import { erpConfig } from './config.js';
import { erpDemo } from './demo.js';
import { defineConnector, type ConnectorSettings, type ParseResult, type WebhookRequest } from '../types.js';
import { mapErpBody } from './map.js';
import { ErpBody, WEBHOOK_ID_HEADER } from './schemas.js';
import { signErp, verifyErp } from './verify.js';

/**
 * The ERP (POST /webhooks/erp): canonical events, one or a batch, signed per Standard Webhooks
 * with ERP_WEBHOOK_SECRET (`whsec_<base64>`). Its source defaults to `api`.
 * docs/connectors-stripe-erp.md has the rules.
 */
export const erpConnector = defineConnector({
  ...erpConfig,
  defaultSource: 'api',
  signsTimestamp: true,
  contentTypes: ['application/json'],
  verify: verifyErp,
  demo: erpDemo,
  replayHeaders: ({ deliveryId }) => ({ 'webhook-id': deliveryId }),
  parse: parseErp,
  sign: signErp,
});

function parseErp(req: WebhookRequest, settings: ConnectorSettings): ParseResult {
  // Standard Webhooks: webhook-id is the same on every retry of one message.
  const deliveryId = req.headers[WEBHOOK_ID_HEADER];
  if (!deliveryId) return { kind: 'invalid', message: 'missing webhook-id header' };
  const context = { deliveryId };
  const json = parseJsonBody(req.rawBody);
  if (!json.ok) return { kind: 'invalid', ...context, message: json.message };
  const body = ErpBody.safeParse(json.value);
  if (!body.success) return invalidFromZod(body.error, context);

  const mapped = mapErpBody(body.data, { source: settings.source, ...(settings.connection === undefined ? {} : { connection: settings.connection }) });
  if (mapped.kind === 'invalid') {
    return { kind: 'invalid', topic: mapped.topic, ...context, message: mapped.message, ...(mapped.fields ? { fields: mapped.fields } : {}) };
  }
  return {
    kind: 'events',
    topic: mapped.topic,
    deliveryId,
    events: mapped.events,
    ...(mapped.rejected.length > 0 ? { rejected: mapped.rejected } : {}),
  };
}
