import { z } from 'zod';

/**
 * Fault injection for tests: per-route errors (500/503), 429 with Retry-After, latency before or
 * after processing, connections dropped after the request was processed (the ambiguous case of a
 * non-idempotent POST), forced token expiry, and raw answers of what stands between a client and
 * a real service (a proxy's HTML 502, a WAF's 200 page, an empty 500, a gateway's 403). Randomness
 * comes from a seeded generator, so a seed gives the same faults for the same sequence of requests.
 */

export const FAULT_KINDS = ['error', 'rate_limit', 'latency', 'drop', 'expire_token', 'answer'] as const;

export const FaultRule = z.strictObject({
  kind: z.enum(FAULT_KINDS),
  /** An endpoint name (`vat.submit`), a prefix with `*` (`customers.*`), or `*` for every API route. */
  route: z.string().min(1).default('*'),
  /** Probability per matching request, 0..1. */
  rate: z.number().min(0).max(1).default(1),
  /** Fire at most this many times, then stay quiet. */
  times: z.number().int().positive().optional(),
  /**
   * error: the status to answer (default 500). Any 4xx or 5xx, so a test can also play a service
   * that refuses a permission (403), loses a route (404) or answers outside its contract (418).
   * answer: the status to answer (default 200), any of 200..599.
   */
  status: z.number().int().min(200).max(599).optional(),
  /** rate_limit (always) and error (when set): the Retry-After header, in seconds. */
  retry_after_s: z.number().int().nonnegative().optional(),
  /** answer: the body as sent, byte for byte (default none). */
  body: z.string().optional(),
  /** answer: headers as sent (`content-type`, `retry-after` as an HTTP date, `www-authenticate`…). */
  headers: z.record(z.string(), z.string()).optional(),
  /** latency: milliseconds to wait. */
  ms: z.number().int().nonnegative().optional(),
  /** latency: wait before processing (default) or after processing, before answering. */
  phase: z.enum(['before', 'after']).optional(),
}).refine((rule) => rule.kind !== 'error' || rule.status === undefined || rule.status >= 400, {
  message: 'an error fault answers a 4xx or 5xx status (a 2xx or 3xx is the answer fault)',
  path: ['status'],
});
export type FaultRule = z.infer<typeof FaultRule>;
export type FaultRuleInput = z.input<typeof FaultRule>;

export interface FaultState extends FaultRule {
  fired: number;
}

/** What the faults decided for one request (everything but expire_token). */
export interface FaultDecision {
  latencyBeforeMs: number;
  latencyAfterMs: number;
  /** Answer this instead of processing (`body`: raw text, for `answer`). */
  reject?: { status: number; headers: Record<string, string>; kind: 'error' | 'rate_limit' | 'answer'; body?: string };
  /** Process, then destroy the connection without an answer. */
  drop: boolean;
  /** Kinds that fired, for the request log. */
  fired: string[];
}

/** mulberry32: small, fast and good enough to spread faults; deterministic for a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function routeMatches(pattern: string, endpoint: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return endpoint.startsWith(pattern.slice(0, -1));
  return pattern === endpoint;
}

export interface Faults {
  /** Whether to expire the presented token before checking it. */
  decideTokenExpiry(endpoint: string): boolean;
  decide(endpoint: string): FaultDecision;
  list(): FaultState[];
  set(rules: readonly FaultRuleInput[], seed?: number): void;
  add(rule: FaultRuleInput): void;
  clear(): void;
  seed(): number;
}

export function createFaults(initial: readonly FaultRuleInput[], initialSeed: number): Faults {
  let rules: FaultState[] = [];
  let currentSeed = initialSeed;
  let random = seededRandom(initialSeed);

  // A rule at rate 1 never draws, so adding one does not shift the random sequence of the others.
  const fires = (rule: FaultState): boolean => {
    if (rule.times !== undefined && rule.fired >= rule.times) return false;
    const hit = rule.rate >= 1 || (rule.rate > 0 && random() < rule.rate);
    if (hit) rule.fired += 1;
    return hit;
  };
  const set = (next: readonly FaultRuleInput[], seed?: number) => {
    rules = next.map((r) => ({ ...FaultRule.parse(r), fired: 0 }));
    if (seed !== undefined) currentSeed = seed;
    random = seededRandom(currentSeed);
  };
  set(initial);

  return {
    decideTokenExpiry(endpoint) {
      return rules.filter((r) => r.kind === 'expire_token' && routeMatches(r.route, endpoint)).some(fires);
    },
    decide(endpoint) {
      const decision: FaultDecision = { latencyBeforeMs: 0, latencyAfterMs: 0, drop: false, fired: [] };
      for (const rule of rules) {
        if (rule.kind === 'expire_token' || !routeMatches(rule.route, endpoint)) continue;
        if (rule.kind !== 'latency' && (decision.reject !== undefined || decision.drop)) continue;
        if (!fires(rule)) continue;
        decision.fired.push(rule.kind);
        if (rule.kind === 'latency') {
          if (rule.phase === 'after') decision.latencyAfterMs += rule.ms ?? 0;
          else decision.latencyBeforeMs += rule.ms ?? 0;
        } else if (rule.kind === 'drop') {
          decision.drop = true;
        } else if (rule.kind === 'answer') {
          decision.reject = {
            status: rule.status ?? 200,
            headers: Object.fromEntries(Object.entries(rule.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
            kind: 'answer',
            ...(rule.body === undefined ? {} : { body: rule.body }),
          };
        } else if (rule.kind === 'rate_limit') {
          decision.reject = { status: 429, headers: { 'retry-after': String(rule.retry_after_s ?? 1) }, kind: 'rate_limit' };
        } else {
          decision.reject = {
            status: rule.status ?? 500,
            headers: rule.retry_after_s === undefined ? {} : { 'retry-after': String(rule.retry_after_s) },
            kind: 'error',
          };
        }
      }
      return decision;
    },
    list: () => rules.map((r) => ({ ...r })),
    set,
    add(rule) {
      rules.push({ ...FaultRule.parse(rule), fired: 0 });
    },
    clear() {
      set([]);
    },
    seed: () => currentSeed,
  };
}
