import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { digestEquals, fromBase64, hmacSha256 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'x-shopify-hmac-sha256';

/**
 * Shopify signs the raw body: X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of the bytes as
 * sent, keyed with the app's client secret (or the secret shown for webhooks created in the
 * admin). Checked before any parsing, in constant time, against every configured secret.
 */
export function verifyShopify(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  const header = req.headers[SIGNATURE_HEADER];
  if (header === undefined || header === '') return { ok: false, reason: 'missing X-Shopify-Hmac-Sha256 header' };
  const received = fromBase64(header);
  if (received === undefined) return { ok: false, reason: 'X-Shopify-Hmac-Sha256 is not base64' };
  if (settings.secrets.length === 0) return { ok: false, reason: 'no Shopify webhook secret is configured' };
  let matched = false;
  // Every secret is tried (no early exit), so timing does not tell which one matched.
  for (const secret of settings.secrets) {
    if (digestEquals(hmacSha256(secret.reveal(), req.rawBody), received)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'X-Shopify-Hmac-Sha256 does not match any configured secret' };
}

export function signShopify(rawBody: Buffer, secret: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: hmacSha256(secret, rawBody).toString('base64') };
}
