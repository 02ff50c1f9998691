import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { signBodyHmacBase64, verifyBodyHmacBase64 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'x-wc-webhook-signature';

/**
 * WooCommerce signs the raw body: X-WC-Webhook-Signature is the base64 HMAC-SHA256 of the bytes as
 * sent, keyed with the webhook's secret (WC_Webhook::generate_signature). Checked before any
 * parsing, in constant time, against every configured secret.
 */
export function verifyWoo(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  return verifyBodyHmacBase64(req, settings, {
    header: SIGNATURE_HEADER,
    label: 'X-WC-Webhook-Signature',
    what: { none: 'WooCommerce webhook secret', any: 'secret' },
  });
}

export function signWoo(rawBody: Buffer, secret: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: signBodyHmacBase64(rawBody, secret) };
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The ping WooCommerce sends when a webhook is saved: an unsigned form body `webhook_id=<id>`. It
 * gets a 200 and nothing else, so that WooCommerce activates the webhook.
 */
export function isWooPing(req: WebhookRequest): boolean {
  return req.contentType === FORM && /^webhook_id=\d+$/.test(req.rawBody.toString('utf8').trim());
}
