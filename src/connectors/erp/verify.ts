import { createHash } from 'node:crypto';
import { digestEquals, fromBase64, hmacSha256 } from '../shared/crypto.js';
import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './schemas.js';

/**
 * Standard Webhooks, symmetric scheme (github.com/standard-webhooks/standard-webhooks,
 * spec/standard-webhooks.md, "Signature scheme" and "Webhook headers"):
 * - signed content: `${webhook-id}.${webhook-timestamp}.${raw body}`, HMAC-SHA256, base64;
 * - `webhook-signature`: space-delimited `v1,<base64>` entries, any of which may match (the
 *   producer signs with the old and the new key during a rotation); other versions (`v1a`
 *   asymmetric) are ignored;
 * - `webhook-timestamp`: integer unix seconds, held to the tolerance of the receipt time;
 * - the secret is serialized as `whsec_` + base64 of the key bytes: the prefix is stripped and
 *   the rest base64-decoded. A secret without the prefix is decoded as base64 too (the prefix is
 *   only a label). URL-safe base64 and missing padding are accepted; a secret that is not base64
 *   at all can never match (it is a configuration error, reported without the secret).
 */

const SECRET_PREFIX = 'whsec_';

/** The HMAC key of a Standard Webhooks secret, or undefined when it is not base64. */
export function decodeSecret(secret: string): Buffer | undefined {
  let text = secret.trim();
  if (text.startsWith(SECRET_PREFIX)) text = text.slice(SECRET_PREFIX.length);
  if (/[-_]/.test(text)) {
    if (/[+/]/.test(text)) return undefined;
    text = text.replace(/-/g, '+').replace(/_/g, '/');
  }
  if (text.replace(/=+$/, '').length % 4 === 1) return undefined;
  const key = fromBase64(text);
  return key && key.length > 0 ? key : undefined;
}

function signedContent(id: string, timestamp: string, rawBody: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), rawBody]);
}

export function verifyErp(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  const id = req.headers[WEBHOOK_ID_HEADER];
  const timestamp = req.headers[WEBHOOK_TIMESTAMP_HEADER];
  const header = req.headers[WEBHOOK_SIGNATURE_HEADER];
  if (!id || !timestamp || !header) return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature header' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'webhook-timestamp is not integer unix seconds' };
  const now = Math.floor(req.receivedAt.getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > settings.toleranceSeconds) {
    return { ok: false, reason: `webhook-timestamp is more than ${settings.toleranceSeconds} s away from the time of receipt` };
  }
  const signatures: Buffer[] = [];
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const digest = fromBase64(entry.slice(comma + 1));
    if (digest) signatures.push(digest);
  }
  if (signatures.length === 0) return { ok: false, reason: 'webhook-signature carries no v1 signature' };
  const keys = settings.secrets.map((s) => decodeSecret(s.reveal())).filter((k): k is Buffer => k !== undefined);
  if (keys.length === 0) return { ok: false, reason: 'no configured ERP webhook secret is valid base64 (expected whsec_<base64>)' };

  const content = signedContent(id, timestamp, req.rawBody);
  let matched = false;
  // Every key against every signature, without stopping early.
  for (const key of keys) {
    const expected = hmacSha256(key, content);
    for (const signature of signatures) if (digestEquals(expected, signature)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'no v1 signature matches a configured secret' };
}

/**
 * Headers a Standard Webhooks producer would send for this body. The message id is derived from
 * the body so that signing the same body twice gives the same delivery id (a producer keeps the id
 * across retries); a real ERP sends its own id.
 */
export function signErp(rawBody: Buffer, secret: string, now: Date): Record<string, string> {
  const key = decodeSecret(secret);
  if (!key) throw new Error('the ERP webhook secret is not base64 (expected whsec_<base64>)');
  const id = `msg_${createHash('sha256').update(rawBody).digest('hex').slice(0, 32)}`;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = hmacSha256(key, signedContent(id, timestamp, rawBody)).toString('base64');
  return { [WEBHOOK_ID_HEADER]: id, [WEBHOOK_TIMESTAMP_HEADER]: timestamp, [WEBHOOK_SIGNATURE_HEADER]: `v1,${signature}` };
}
