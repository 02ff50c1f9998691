import { describe, expect, it } from 'vitest';
import { decryptTokens, encryptTokens, tokenKey } from '../../../src/oauth/token-crypto.js';
import { Secret } from '../../../src/domain/secret.js';

describe('token sets at rest', () => {
  const key = tokenKey(new Secret(Buffer.alloc(32, 1).toString('base64')));

  it('decrypt only with the key and for the connection they were written for, and never repeat a ciphertext', () => {
    const sealed = encryptTokens(key, 'xero-uk', '{"refresh_token":"R1"}');
    expect(sealed).not.toContain('R1');
    expect(decryptTokens(key, 'xero-uk', sealed)).toBe('{"refresh_token":"R1"}');
    expect(decryptTokens(key, 'xero-fr', sealed)).toBeUndefined();
    expect(decryptTokens(tokenKey(new Secret('ab'.repeat(32))), 'xero-uk', sealed)).toBeUndefined();
    expect(decryptTokens(key, 'xero-uk', `${sealed.slice(0, -4)}AAAA`)).toBeUndefined();
    expect(encryptTokens(key, 'xero-uk', 'same')).not.toBe(encryptTokens(key, 'xero-uk', 'same'));
  });

  it('take a 32-byte key as hex or base64, and say what is wrong with another without showing it', () => {
    expect(tokenKey(new Secret('0f'.repeat(32)))).toHaveLength(32);
    expect(() => tokenKey(new Secret('too-short-secret-value'))).toThrow('TAXSYNC_TOKEN_KEY must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)');
  });
});
