import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../src/api/errors.js';

// One reader of Retry-After for the services' client and the platform APIs (backfill, a waiting refund's original).
describe('Retry-After', () => {
  it('reads delay-seconds, with a fraction as Shopify sends it, and an HTTP date; nothing else', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 2.0 ', now)).toBe(2000);
    expect(parseRetryAfter('0.25', now)).toBe(250);
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
