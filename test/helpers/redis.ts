import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, inject } from 'vitest';

/** A key prefix of its own for each test, with the hash tag taxsync uses in production. */
export function uniquePrefix(): string {
  return `{taxsync-test-${randomUUID().slice(0, 12)}}`;
}

export interface RedisTestContext {
  url: string;
  redis: Redis;
  prefix: string;
}

/**
 * Gives each test a Redis connection and a fresh key prefix, and removes the test's keys after it.
 * Test files can run in parallel because no two tests share a prefix.
 */
export function useRedis(): RedisTestContext {
  const ctx = { url: inject('redisUrl') } as RedisTestContext;
  beforeEach(() => {
    ctx.redis = new Redis(ctx.url, { maxRetriesPerRequest: 3, lazyConnect: false });
    ctx.prefix = uniquePrefix();
  });
  afterEach(async () => {
    const stream = ctx.redis.scanStream({ match: `${ctx.prefix}*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length > 0) await ctx.redis.unlink(...keys);
    }
    await ctx.redis.quit();
  });
  return ctx;
}
