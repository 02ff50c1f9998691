import { randomUUID } from 'node:crypto';
import type { RedisClient } from './connection.js';

/**
 * A short lock in Redis held by one process while it works on something several jobs share (an
 * invoice's refunds, a customer's writes). It expires by itself, so a holder that dies (a killed
 * worker) frees it within its time to live, and it is renewed every third of that while its holder
 * works, so a live one keeps it however long its calls take.
 */
export interface Lease {
  readonly key: string;
  readonly token: string;
  /** Deletes the lock if it is still this holder's; stops the renewal. */
  release(): Promise<void>;
  /** Stops the renewal and leaves the lock to expire by itself (what a killed process leaves). */
  abandon(): void;
}

export interface LeaseOptions {
  /** The lock's time to live; renewed every third of it. */
  ttlMs: number;
  /** How long to keep trying while another holder has it (0: one try). */
  waitMs?: number;
  /** The pause between two tries. @defaultValue 20 */
  pollMs?: number;
}

// Deletes the lock only if this holder still owns it.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
// Extends the lock only if this holder still owns it.
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

// Sent as text (EVAL): a lock is taken on whatever client the caller has, at any time, and a
// command defined on a client mid-traffic breaks its auto-pipelines (scriptOn).

/** Deletes the lock `key` if `token` still holds it; true when it did. */
export async function releaseLock(redis: RedisClient, key: string, token: string): Promise<boolean> {
  return Number(await redis.eval(RELEASE, 1, key, token)) === 1;
}

/** Extends the lock `key` to `ttlMs` if `token` still holds it; true when it did. */
export async function renewLock(redis: RedisClient, key: string, token: string, ttlMs: number): Promise<boolean> {
  return Number(await redis.eval(EXTEND, 1, key, token, ttlMs)) === 1;
}

/**
 * Takes the lock `key`: `tryTake(token)` is one attempt (a plain SET NX, or a script that takes it
 * and reads in the same step) and answers what it read, or undefined when another holder has it.
 * Returns undefined when the lock stayed taken for `waitMs`.
 */
export async function acquireLease<T>(
  redis: RedisClient,
  key: string,
  options: LeaseOptions,
  tryTake: (token: string) => Promise<T | undefined>,
): Promise<{ lease: Lease; taken: T } | undefined> {
  const token = randomUUID();
  const until = Date.now() + (options.waitMs ?? 0);
  let taken = await tryTake(token);
  while (taken === undefined && Date.now() < until) {
    const pollMs = options.pollMs ?? 20;
    await new Promise((resolve) => setTimeout(resolve, pollMs / 2 + Math.random() * pollMs));
    taken = await tryTake(token);
  }
  if (taken === undefined) return undefined;
  const renew = setInterval(() => {
    // A failed renewal is harmless here: the next one (or the release) tries again.
    renewLock(redis, key, token, options.ttlMs).catch(() => undefined);
  }, options.ttlMs / 3);
  renew.unref();
  const lease: Lease = {
    key,
    token,
    async release() {
      clearInterval(renew);
      await releaseLock(redis, key, token);
    },
    abandon() {
      clearInterval(renew);
    },
  };
  return { lease, taken };
}

/** One try of a plain lock: SET NX with the time to live. */
export function setNx(redis: RedisClient, key: string, ttlMs: number): (token: string) => Promise<true | undefined> {
  return async (token) => ((await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK' ? true : undefined);
}
