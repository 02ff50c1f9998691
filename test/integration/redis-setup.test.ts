import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers/redis.js';

describe('test Redis', () => {
  const ctx = useRedis();

  it('answers PING on the URL the global setup provided', async () => {
    expect(await ctx.redis.ping()).toBe('PONG');
  });

  it('gives each test its own hash-tagged key prefix', async () => {
    expect(ctx.prefix).toMatch(/^\{taxsync-test-[0-9a-f-]+\}$/);
    await ctx.redis.set(`${ctx.prefix}:probe`, '1');
    expect(await ctx.redis.keys(`${ctx.prefix}*`)).toEqual([`${ctx.prefix}:probe`]);
  });
});
