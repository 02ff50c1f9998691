import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../types.js';

export function hmacSha256(key: string | Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/**
 * Constant-time comparison of a computed digest with a received one. Lengths are compared first
 * (a length is not a secret); contents in constant time.
 */
export function digestEquals(expected: Buffer, received: Buffer): boolean {
  return expected.length === received.length && timingSafeEqual(expected, received);
}

/** Decodes base64 strictly enough to compare: undefined for text that is not base64. */
export function fromBase64(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, 'base64');
}

export function fromHex(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, 'hex');
}

/** How a platform's body signature is named in the reasons verifyBodyHmacBase64 gives. */
export interface BodyHmacHeader {
  /** The header, lowercase as WebhookRequest.headers holds it ('x-shopify-hmac-sha256'). */
  header: string;
  /** The header as reasons write it ('X-Shopify-Hmac-Sha256'). @defaultValue header */
  label?: string;
  /** The secret as reasons name it: "no <none> is configured", "<label> does not match any configured <any>". */
  what: { none: string; any: string };
}

/**
 * The check Shopify, WooCommerce, Xero and QuickBooks share: the header is the base64
 * HMAC-SHA256 of the raw body as sent, keyed with the secret as UTF-8. Every configured secret is
 * tried (several during a rotation) with no early exit, so the time taken does not tell which one
 * matched; each digest is compared in constant time. A reason names the header and the kind of
 * secret, never a secret or the signature. A blank header is a missing one.
 */
export function verifyBodyHmacBase64(req: WebhookRequest, settings: ConnectorSettings, spec: BodyHmacHeader): VerifyResult {
  const label = spec.label ?? spec.header;
  const header = req.headers[spec.header];
  if (header === undefined || header.trim() === '') return { ok: false, reason: `missing ${label} header` };
  const received = fromBase64(header);
  if (received === undefined) return { ok: false, reason: `${label} is not base64` };
  if (settings.secrets.length === 0) return { ok: false, reason: `no ${spec.what.none} is configured` };
  let matched = false;
  for (const secret of settings.secrets) {
    if (digestEquals(hmacSha256(secret.reveal(), req.rawBody), received)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: `${label} does not match any configured ${spec.what.any}` };
}

/** The signature verifyBodyHmacBase64 accepts for this body and secret: for tests, fixtures and `taxsync demo`. */
export function signBodyHmacBase64(rawBody: Buffer, secret: string): string {
  return hmacSha256(secret, rawBody).toString('base64');
}
