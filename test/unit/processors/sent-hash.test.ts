import { describe, expect, it } from 'vitest';
import { sentHash } from '../../../src/processors/sent-hash.js';
import { createHash } from 'node:crypto';

const sha = (text: string) => createHash('sha256').update(text).digest('base64url');

describe('sentHash', () => {
  it('is the hash of the body as JSON with its keys sorted at every depth', () => {
    const body = { b: '1.50', a: [{ z: true, y: null }, 'x'], c: { e: 2, d: 'é"' } };
    expect(sentHash(body)).toBe(sha('{"a":[{"y":null,"z":true},"x"],"b":"1.50","c":{"d":"é\\"","e":2}}'));
  });

  it('is the same whatever order the keys were built in, and differs when a value does', () => {
    expect(sentHash({ source: 'api', external_id: 'a', items: [{ unit_price: '1', quantity: '2' }] })).toBe(
      sentHash({ items: [{ quantity: '2', unit_price: '1' }], external_id: 'a', source: 'api' }),
    );
    expect(sentHash({ a: '1.0' })).not.toBe(sentHash({ a: '1.00' }));
  });

  it('drops undefined members as JSON does', () => {
    expect(sentHash({ a: 1, b: undefined })).toBe(sentHash({ a: 1 }));
    expect(sentHash([undefined])).toBe(sha('[null]'));
  });
});
