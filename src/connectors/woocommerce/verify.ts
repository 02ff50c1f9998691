import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { digestEquals, fromBase64, hmacSha256 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'x-wc-webhook-signature';

/**
 * WooCommerce signs the raw body: X-WC-Webhook-Signature is the base64 HMAC-SHA256 of the bytes as
 * sent, keyed with the webhook's secret (WC_Webhook::generate_signature). Checked before any
 * parsing, in constant time, against every configured secret.
 */
export function verifyWoo(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  const header = req.headers[SIGNATURE_HEADER];
  if (header === undefined || header === '') return { ok: false, reason: 'missing X-WC-Webhook-Signature header' };
  const received = fromBase64(header);
  if (received === undefined) return { ok: false, reason: 'X-WC-Webhook-Signature is not base64' };
  if (settings.secrets.length === 0) return { ok: false, reason: 'no WooCommerce webhook secret is configured' };
  let matched = false;
  // Every secret is tried (no early exit), so timing does not tell which one matched.
  for (const secret of settings.secrets) {
    if (digestEquals(hmacSha256(secret.reveal(), req.rawBody), received)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'X-WC-Webhook-Signature does not match any configured secret' };
}

export function signWoo(rawBody: Buffer, secret: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: hmacSha256(secret, rawBody).toString('base64') };
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The ping WooCommerce sends when a webhook is saved: an unsigned form body `webhook_id=<id>`. It
 * gets a 200 and nothing else, so that WooCommerce activates the webhook.
 */
export function isWooPing(req: WebhookRequest): boolean {
  return req.contentType === FORM && /^webhook_id=\d+$/.test(req.rawBody.toString('utf8').trim());
}
