import { describe, expect, it } from 'vitest';
import { FaultRule, createFaults, seededRandom } from '../../../src/emulator/faults.js';
import { faultsFromFlags } from '../../../src/cli/commands/emulator.js';
import { useEmulator } from './helpers.js';

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

describe('the answer fault', () => {
  const ctx = useEmulator();

  it('answers the raw status, headers and body a proxy or gateway would, without processing the request', async () => {
    ctx.emulator.faults.set([
      { kind: 'answer', route: 'customers.upsert', status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>', headers: { 'Content-Type': 'text/html' }, times: 1 },
      { kind: 'answer', route: 'customers.upsert', status: 200, times: 1 },
    ]);
    const proxy = await ctx.http('PUT', '/v1/customers/', { json: { source: 'api', external_id: 'c-1' } });
    expect(proxy.status).toBe(502);
    expect(proxy.headers.get('content-type')).toBe('text/html');
    expect(proxy.body).toContain('502 Bad Gateway');
    const empty = await ctx.http('PUT', '/v1/customers/', { json: { source: 'api', external_id: 'c-1' } });
    expect(empty.status).toBe(200);
    expect(empty.headers.get('content-type')).toBeNull();
    expect(empty.body).toBeUndefined();
    expect(ctx.emulator.state.customers.live()).toHaveLength(0);
    expect(ctx.emulator.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert').map((e) => [e.status, e.outcome, e.faults])).toEqual([
      [502, 'answered', ['answer']],
      [200, 'answered', ['answer']],
    ]);
  });

  it('is an error fault only with a 4xx or 5xx status', () => {
    expect(FaultRule.safeParse({ kind: 'error', status: 200 }).success).toBe(false);
    expect(FaultRule.safeParse({ kind: 'answer', status: 200, body: 'ok' }).success).toBe(true);
  });
});
