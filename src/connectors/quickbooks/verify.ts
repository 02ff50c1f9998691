import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { signBodyHmacBase64, verifyBodyHmacBase64 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'intuit-signature';

/**
 * Intuit signs the raw body of every webhook delivery, classic and CloudEvents alike:
 * intuit-signature is the base64 HMAC-SHA256 of the bytes as sent, keyed with the app's Verifier
 * Token as UTF-8 (docs/research/accounting-payloads.md). No timestamp is signed, so nothing bounds a
 * replay; the fetch jobs read the entity's current state, which makes a replay harmless. Checked
 * before any parsing, in constant time, against every configured token (several during a rotation).
 */
export function verifyQuickBooks(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  return verifyBodyHmacBase64(req, settings, { header: SIGNATURE_HEADER, what: { none: 'QuickBooks verifier token', any: 'verifier token' } });
}

/** The header Intuit would send for this body: for tests, fixtures and `taxsync demo`. */
export function signQuickBooks(rawBody: Buffer, token: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: signBodyHmacBase64(rawBody, token) };
}
