import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { signBodyHmacBase64, verifyBodyHmacBase64 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'x-shopify-hmac-sha256';

/**
 * Shopify signs the raw body: X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of the bytes as
 * sent, keyed with the app's client secret (or the secret shown for webhooks created in the
 * admin). Checked before any parsing, in constant time, against every configured secret.
 */
export function verifyShopify(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  return verifyBodyHmacBase64(req, settings, {
    header: SIGNATURE_HEADER,
    label: 'X-Shopify-Hmac-Sha256',
    what: { none: 'Shopify webhook secret', any: 'secret' },
  });
}

export function signShopify(rawBody: Buffer, secret: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: signBodyHmacBase64(rawBody, secret) };
}
