import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, DEFAULT_VAT_RETRY, fullJitterDelay, policyFor } from '../../src/queue/retry.js';
import { loadConfig } from '../../src/config/index.js';

describe('retry schedules', () => {
  it('keeps full-jitter delays within the exponential bound and the cap', () => {
    const policy = { baseMs: 1_000, capMs: 10_000 };
    expect(fullJitterDelay(1, policy, () => 0.999)).toBeLessThanOrEqual(1_000);
    expect(fullJitterDelay(3, policy, () => 0.999)).toBeLessThanOrEqual(4_000);
    expect(fullJitterDelay(30, policy, () => 1)).toBe(10_000);
    expect(fullJitterDelay(5, policy, () => 0)).toBe(0);
  });

  it('gives VAT submissions a schedule that reaches about a day, and records about an hour', () => {
    const worstCase = (p: typeof DEFAULT_RETRY) =>
      Array.from({ length: p.attempts - 1 }, (_, i) => Math.min(p.capMs, p.baseMs * 2 ** i)).reduce((a, b) => a + b, 0);
    expect(worstCase(DEFAULT_VAT_RETRY) / 3_600_000).toBeGreaterThan(20);
    expect(worstCase(DEFAULT_RETRY) / 3_600_000).toBeLessThan(2);
  });

  it('picks the VAT policy for vat records from the configured pair', () => {
    const config = loadConfig({ TAXSYNC_VAT_MAX_ATTEMPTS: '7', TAXSYNC_MAX_ATTEMPTS: '3' });
    expect(policyFor('vat', config.queue.retry).attempts).toBe(7);
    expect(policyFor('transaction', config.queue.retry).attempts).toBe(3);
  });
});
