import { signBodyHmacBase64, verifyBodyHmacBase64 } from '../shared/crypto.js';
import { parseJsonBody } from '../shared/parse.js';
import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';

/**
 * Xero signs the raw body: `x-xero-signature` is base64( HMAC-SHA256( key = the app's webhook key
 * as a UTF-8 string, message = the request body bytes as sent ) ). Re-serialising the JSON would
 * change the bytes, so this runs on `rawBody` before any parsing. No timestamp is signed.
 * (developer.xero.com/documentation/webhooks/configuring-your-server; Xero staff example
 * gist.github.com/constantm/3ad8d31fd8fc2e1f00eff1246fd591ba)
 */
export const SIGNATURE_HEADER = 'x-xero-signature';

/** Every configured key is tried (several during a rotation); see verifyBodyHmacBase64. */
export function verifyXero(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  return verifyBodyHmacBase64(req, settings, { header: SIGNATURE_HEADER, what: { none: 'Xero webhook key', any: 'webhook key' } });
}

/** The header Xero would send for this body: for tests, fixtures and `taxsync demo`. */
export function signXero(rawBody: Buffer, key: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: signBodyHmacBase64(rawBody, key) };
}

/**
 * An "Intent to Receive" request: `{"events": [], "firstEventSequence": 0, "lastEventSequence": 0,
 * "entropy": …}`, sent when a subscription is created, re-enabled or moved. Takes the raw body or
 * the parsed JSON. It needs no special handling beyond the answer below: it carries no event.
 */
export function isIntentToReceive(body: unknown): boolean {
  let value = body;
  if (Buffer.isBuffer(body)) {
    const parsed = parseJsonBody(body);
    if (!parsed.ok) return false;
    value = parsed.value;
  }
  if (typeof value !== 'object' || value === null) return false;
  const { events, firstEventSequence, lastEventSequence } = value as Record<string, unknown>;
  return Array.isArray(events) && events.length === 0 && firstEventSequence === 0 && lastEventSequence === 0;
}

/** What the HTTP layer answers Xero. */
export interface XeroAnswer {
  status: 200 | 401;
  /** Always empty: Xero wants no body (and no cookies). */
  body: '';
}

/**
 * Xero's rules for the answer, the same for an Intent to Receive request and a delivery
 * (developer.xero.com/documentation/webhooks/configuring-your-server): a correctly signed request
 * gets **200 with an empty body and no Set-Cookie**, within 5 seconds; an incorrectly signed one
 * gets **401**. Intent to Receive sends a mix of both and enables the webhook only when every
 * answer is right; failed deliveries are retried for up to 24 hours, then the webhook is
 * disabled. So: verify first, answer from the verdict alone, queue the notices (never fetch the
 * records) before answering, and send no JSON body as other routes do.
 */
export function xeroAnswer(verified: VerifyResult): XeroAnswer {
  return { status: verified.ok ? 200 : 401, body: '' };
}
