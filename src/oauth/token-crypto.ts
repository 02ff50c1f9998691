import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { TaxsyncError } from '../domain/errors.js';
import type { Secret } from '../domain/secret.js';

/**
 * OAuth token sets are kept in Redis encrypted (AES-256-GCM, a fresh 12-byte nonce per write), so
 * a copy of Redis (a backup, a replica, an AOF file) holds no usable token: the key lives only in
 * the environment (TAXSYNC_TOKEN_KEY; docs/decisions.md, "Rotating refresh tokens"). The connection's id is
 * the additional data, so a set copied to another connection's key does not decrypt. node:crypto
 * does the job; no library adds anything here.
 */

const VERSION = 'v1';

/** The 32-byte key from its base64 or hex text; an error naming what is wrong, never the key. */
export function tokenKey(secret: Secret): Buffer {
  const text = secret.reveal().trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new TaxsyncError('CONFIG_INVALID', 'TAXSYNC_TOKEN_KEY must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)');
  return key;
}

export function encryptTokens(key: Buffer, connection: string, plain: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(connection, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, nonce.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
}

/** The plain text, or undefined when the value was not written with this key for this connection. */
export function decryptTokens(key: Buffer, connection: string, sealed: string): string | undefined {
  const [version, nonce, tag, body] = sealed.split('.');
  if (version !== VERSION || nonce === undefined || tag === undefined || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64'));
    decipher.setAAD(Buffer.from(connection, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
