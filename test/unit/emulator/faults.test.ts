import { describe, expect, it } from 'vitest';
import { createFaults, seededRandom } from '../../../src/emulator/faults.js';
import { faultsFromFlags } from '../../../src/cli/commands/emulator.js';

describe('fault randomness', () => {
  it('is the same for the same seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, c)).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('fires a rule at its rate for matching routes only, and at most `times` times', () => {
    const faults = createFaults([{ kind: 'error', route: 'customers.*', rate: 0.3 }, { kind: 'drop', route: 'vat.submit', times: 2 }], 9);
    const hits = Array.from({ length: 1000 }, () => faults.decide('customers.get').reject !== undefined).filter(Boolean).length;
    expect(hits).toBeGreaterThan(240);
    expect(hits).toBeLessThan(360);
    expect(faults.decide('transactions.get').reject).toBeUndefined();
    expect([1, 2, 3].map(() => faults.decide('vat.submit').drop)).toEqual([true, true, false]);
  });
});

describe('the CLI fault flags', () => {
  it('become one rule per kind and route', () => {
    expect(
      faultsFromFlags({ faultRoutes: ['vat.submit', 'customers.*'], errorRate: 0.1, errorStatus: 503, retryAfter: 3, rateLimitRate: 0.2, dropRate: 0.05 }),
    ).toEqual([
      { kind: 'error', route: 'vat.submit', rate: 0.1, status: 503 },
      { kind: 'rate_limit', route: 'vat.submit', rate: 0.2, retry_after_s: 3 },
      { kind: 'drop', route: 'vat.submit', rate: 0.05 },
      { kind: 'error', route: 'customers.*', rate: 0.1, status: 503 },
      { kind: 'rate_limit', route: 'customers.*', rate: 0.2, retry_after_s: 3 },
      { kind: 'drop', route: 'customers.*', rate: 0.05 },
    ]);
  });
});
