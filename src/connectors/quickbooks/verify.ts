import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { digestEquals, fromBase64, hmacSha256 } from '../shared/crypto.js';

export const SIGNATURE_HEADER = 'intuit-signature';

/**
 * Intuit signs the raw body of every webhook delivery, classic and CloudEvents alike:
 * intuit-signature is the base64 HMAC-SHA256 of the bytes as sent, keyed with the app's Verifier
 * Token as UTF-8 (docs/research/accounting-payloads.md). No timestamp is signed, so nothing bounds a
 * replay; the fetch jobs read the entity's current state, which makes a replay harmless. Checked
 * before any parsing, in constant time, against every configured token (several during a rotation).
 */
export function verifyQuickBooks(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  const header = req.headers[SIGNATURE_HEADER];
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing intuit-signature header' };
  const received = fromBase64(header);
  if (received === undefined) return { ok: false, reason: 'intuit-signature is not base64' };
  if (settings.secrets.length === 0) return { ok: false, reason: 'no QuickBooks verifier token is configured' };
  let matched = false;
  // Every token is tried (no early exit), so the time taken does not tell which one matched.
  for (const token of settings.secrets) {
    if (digestEquals(hmacSha256(token.reveal(), req.rawBody), received)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'intuit-signature does not match any configured verifier token' };
}

/** The header Intuit would send for this body: for tests, fixtures and `taxsync demo`. */
export function signQuickBooks(rawBody: Buffer, token: string): Record<string, string> {
  return { [SIGNATURE_HEADER]: hmacSha256(token, rawBody).toString('base64') };
}
