import { createHmac, timingSafeEqual } from 'node:crypto';

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
