import { createHmac, timingSafeEqual } from 'node:crypto';

/** Compact HS256 JWTs: all the emulator needs, with node:crypto only. */

export type JwtClaims = Record<string, unknown>;

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}

function signature(input: string, key: Buffer): string {
  return createHmac('sha256', key).update(input).digest('base64url');
}

export function signJwt(claims: JwtClaims, key: Buffer): string {
  const input = `${HEADER}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${signature(input, key)}`;
}

export type JwtCheck = { ok: true; claims: JwtClaims } | { ok: false; reason: string };

/** Checks the form, the algorithm and the signature; expiry is the caller's business. */
export function verifyJwt(token: string, key: Buffer): JwtCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'token is not a JWT (expected three dot-separated parts)' };
  const [header, payload, sig] = parts as [string, string, string];
  let parsedHeader: unknown;
  let claims: unknown;
  try {
    parsedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'token is not a JWT (undecodable header or payload)' };
  }
  if (typeof parsedHeader !== 'object' || parsedHeader === null || (parsedHeader as { alg?: unknown }).alg !== 'HS256') {
    return { ok: false, reason: 'token algorithm must be HS256' };
  }
  const expected = Buffer.from(signature(`${header}.${payload}`, key));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { ok: false, reason: 'token signature is invalid (not issued by this emulator)' };
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return { ok: false, reason: 'token claims are not an object' };
  return { ok: true, claims: claims as JwtClaims };
}
