/** Retry schedule of record jobs (DESIGN.md, "Errors and retries"). */
export interface RetryPolicy {
  /** Attempts before a retryable failure is dead-lettered. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 12, baseMs: 1_000, capMs: 10 * 60_000 };

/**
 * VAT submissions retry for about a day (the service may be down for hours and a submission is
 * due for its period); other records for about an hour. One policy serves both when given alone.
 */
export interface RetryPolicies {
  records: RetryPolicy;
  vat: RetryPolicy;
}

export const DEFAULT_VAT_RETRY: RetryPolicy = { attempts: 40, baseMs: 2_000, capMs: 3_600_000 };

export function policyFor(kind: string, retry: RetryPolicy | RetryPolicies | undefined): RetryPolicy {
  if (retry === undefined) return kind === 'vat' ? DEFAULT_VAT_RETRY : DEFAULT_RETRY;
  if ('records' in retry) return kind === 'vat' ? retry.vat : retry.records;
  return retry;
}

/** The name BullMQ passes to the worker's backoff strategy. */
export const BACKOFF_TYPE = 'taxsync';

/**
 * Exponential backoff with full jitter (a uniformly random delay up to the exponential bound), so
 * many jobs failing together do not retry together.
 */
export function fullJitterDelay(attempt: number, policy: Pick<RetryPolicy, 'baseMs' | 'capMs'>, random: () => number = Math.random): number {
  const bound = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * bound);
}
