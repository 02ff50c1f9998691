import { digestEquals, fromHex, hmacSha256 } from '../shared/crypto.js';
import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';

/**
 * Stripe signs `${t}.${raw body}` with HMAC-SHA256, keyed with the endpoint's signing secret as
 * given (the whole `whsec_…` string, not decoded), and sends
 * `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`. Any v1 may match (Stripe sends
 * several while a secret is rolled); v0 and unknown schemes are ignored. The timestamp must be
 * within the tolerance of the time the delivery was received, in either direction.
 * (docs.stripe.com/webhooks, "Verify webhook signatures manually")
 */
export const SIGNATURE_HEADER = 'stripe-signature';

interface ParsedHeader {
  timestamp: number;
  signatures: Buffer[];
}

function parseHeader(header: string): ParsedHeader | undefined {
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't' && timestamp === undefined) {
      if (!/^\d{1,12}$/.test(value)) return undefined;
      timestamp = Number(value);
    } else if (key === 'v1') {
      const digest = fromHex(value);
      if (digest) signatures.push(digest);
    }
  }
  return timestamp === undefined ? undefined : { timestamp, signatures };
}

function signedPayload(timestamp: number, rawBody: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), rawBody]);
}

export function verifyStripe(req: WebhookRequest, settings: ConnectorSettings): VerifyResult {
  const header = req.headers[SIGNATURE_HEADER];
  if (!header) return { ok: false, reason: 'missing Stripe-Signature header' };
  const parsed = parseHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed Stripe-Signature header: no timestamp' };
  if (parsed.signatures.length === 0) return { ok: false, reason: 'Stripe-Signature header carries no v1 signature' };
  const now = Math.floor(req.receivedAt.getTime() / 1000);
  if (Math.abs(now - parsed.timestamp) > settings.toleranceSeconds) {
    return { ok: false, reason: `signed timestamp is more than ${settings.toleranceSeconds} s away from the time of receipt` };
  }
  const payload = signedPayload(parsed.timestamp, req.rawBody);
  let matched = false;
  // Every secret against every signature, without stopping early: the time taken does not say which matched.
  for (const secret of settings.secrets) {
    const expected = hmacSha256(secret.reveal(), payload);
    for (const signature of parsed.signatures) if (digestEquals(expected, signature)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'no v1 signature matches a configured secret' };
}

/** Headers Stripe would send for this body: for tests, fixtures and `taxsync demo`. */
export function signStripe(rawBody: Buffer, secret: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const v1 = hmacSha256(secret, signedPayload(timestamp, rawBody)).toString('hex');
  return { [SIGNATURE_HEADER]: `t=${timestamp},v1=${v1}` };
}
