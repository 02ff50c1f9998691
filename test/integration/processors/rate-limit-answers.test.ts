import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { readTrace } from '../../../src/queue/trace.js';
import { createPipeline, customerEvent, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

// A 429 (or 503) whose Retry-After says "now": `0`, or an HTTP date already past (the service's
// clock behind ours). Real services send both. The queue must still pause (never a hot loop) and
// the job must go back without using an attempt, as for any 429.
describe('rate limits that say "retry now"', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let emulator: Emulator & { url: string };
  let api: ApiClients;

  beforeEach(async () => {
    // Two attempts: a rate limit must use none of them.
    pipeline = await createPipeline(ctx.url, ctx.prefix, { retry: { attempts: 2, baseMs: 20, capMs: 100 } });
    emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  });
  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  it.each([
    ['Retry-After: 0', '0'],
    ['a Retry-After date already past', 'Wed, 21 Oct 2015 07:28:00 GMT'],
  ])('pauses the queue and succeeds without using an attempt on a 429 with %s', async (_what, retryAfter) => {
    emulator.faults.set([{ kind: 'answer', route: 'customers.upsert', status: 429, headers: { 'retry-after': retryAfter }, times: 3 }]);
    await pipeline.startWorker('customers', createCustomerHandler({ tax: api.tax, settings: DEFAULT_SETTINGS.mapping, writers: pipeline.writers }));

    await pipeline.producer.accept({ events: [customerEvent(1)] });

    const record = { kind: 'customer' as const, source: 'api', external_id: 'c-1' };
    await eventually(async () => {
      const state = await pipeline.records.read(record);
      return state.appliedSeq === 1 || (await pipeline.deadLetters.count()) > 0;
    });
    expect(await pipeline.deadLetters.count()).toBe(0);
    expect(emulator.state.customers.live()).toHaveLength(1);
    const upserts = emulator.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert');
    expect(upserts.map((e) => e.status)).toEqual([429, 429, 429, 201]);
    const pauses = (await readTrace(ctx.redis, pipeline.keys, 'customer|api|c-1')).filter((t) => t.step === 'retry').map((t) => t.detail);
    expect(pauses).toHaveLength(3);
    for (const pause of pauses) expect(pause).toMatch(/^rate limited: queue paused [1-9]\d* ms$/);
  });

  it('pauses the queue at most 15 minutes however long the Retry-After (a gateway asking for days would stop every record that long)', async () => {
    emulator.faults.set([{ kind: 'answer', route: 'customers.upsert', status: 429, headers: { 'retry-after': String(30 * 86_400) }, times: 1 }]);
    await pipeline.startWorker('customers', createCustomerHandler({ tax: api.tax, settings: DEFAULT_SETTINGS.mapping, writers: pipeline.writers }));

    await pipeline.producer.accept({ events: [customerEvent(1)] });

    const record = 'customer|api|c-1';
    await eventually(async () => (await readTrace(ctx.redis, pipeline.keys, record)).some((t) => t.step === 'retry'));
    const [pause] = (await readTrace(ctx.redis, pipeline.keys, record)).filter((t) => t.step === 'retry').map((t) => t.detail);
    expect(pause).toBe(`rate limited: queue paused ${15 * 60_000} ms (Retry-After asked ${30 * 86_400} s; capped)`);
    const limiter = await ctx.redis.pttl(`${ctx.prefix}:customers:limiter`);
    expect(limiter).toBeGreaterThan(0);
    expect(limiter).toBeLessThanOrEqual(15 * 60_000);
  });
});
