import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CanonicalEvent, type CanonicalEventInput } from '../../../src/domain/events.js';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { recordOfJob } from '../../../src/queue/jobs.js';
import { withScripts } from '../../../src/queue/redis-scripts.js';
import { readTrace, traceLine } from '../../../src/queue/trace.js';
import { useRedis } from '../../helpers/redis.js';

function customerEvent(id: string, occurredAt: string, name: string, externalId = 'c-1'): CanonicalEvent {
  const input: CanonicalEventInput = {
    id,
    type: 'customer.upserted',
    occurred_at: occurredAt,
    connector: 'shopify',
    record: { kind: 'customer', source: 'shopify', external_id: externalId },
    data: { name },
  };
  return CanonicalEvent.parse(input);
}

describe('producer', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;

  /** A producer on `on` (and queues on it), as the tests set it up, with `clock` when given. */
  function producerOn(on: Redis, onQueues: Record<QueueName, Queue>, clock?: () => Date): Producer {
    return createProducer({
      queues: onQueues,
      connection: on,
      keys: createKeys(ctx.prefix),
      deadLetters: createDeadLetterStore(onQueues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
      ...(clock ? { clock } : {}),
    });
  }

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
    producer = producerOn(connection, queues);
  });

  afterEach(async () => {
    await closeQueues(queues);
    await connection.quit();
  });

  it('writes the newest state and one job per record for a burst of updates', async () => {
    for (let i = 0; i < 20; i++) {
      const second = String(i).padStart(2, '0');
      await producer.accept({ events: [customerEvent(`e-${i}`, `2026-11-20T10:00:${second}Z`, `name ${i}`)] });
    }
    const key = recordKeyString({ kind: 'customer', source: 'shopify', external_id: 'c-1' });
    expect(await queues.customers.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const job = await queues.customers.getJob(key);
    // The job is a reference: its id is the record key, its data only the version.
    expect(job?.data).toEqual({ v: 2 });
    expect(recordOfJob(job!)).toEqual({ record: { kind: 'customer', source: 'shopify', external_id: 'c-1' } });
    const state = await ctx.redis.hgetall(`${ctx.prefix}:state:${key}`);
    expect(state.seq).toBe('20');
    expect(JSON.parse((await ctx.redis.get(`${ctx.prefix}:event:${key}`))!)).toMatchObject({ id: 'e-19', data: { name: 'name 19' } });
    expect(await ctx.redis.sismember(`${ctx.prefix}:dirty`, key)).toBe(1);
  });

  it('drops an event older than the newest held, counts it and traces it', async () => {
    await producer.accept({ events: [customerEvent('new', '2026-11-20T10:00:10Z', 'new')] });
    const result = await producer.accept({ events: [customerEvent('old', '2026-11-20T10:00:05Z', 'old')] });
    expect(result.outcomes).toEqual(['stale']);
    const key = recordKeyString({ kind: 'customer', source: 'shopify', external_id: 'c-1' });
    expect(JSON.parse((await ctx.redis.get(`${ctx.prefix}:event:${key}`))!)).toMatchObject({ id: 'new' });
    expect(await ctx.redis.hget(`${ctx.prefix}:counters`, 'stale_events')).toBe('1');
    const trace = await readTrace(ctx.redis, createKeys(ctx.prefix), key);
    expect(trace.map((t) => t.step)).toEqual(['received', 'stale']);
  });

  it('keeps a pending event out of the trace list, and trace shows its received line exactly as written before', async () => {
    const keys = createKeys(ctx.prefix);
    const times = ['2024-02-29T23:59:59.999Z', '1999-12-31T00:00:00.000Z', '2100-03-01T12:34:56.007Z', '2026-11-25T14:07:03.120Z'];
    for (const [i, at] of times.entries()) {
      const clocked = producerOn(connection, queues, () => new Date(at));
      const externalId = `c/${i}`;
      const event = customerEvent(`orders/create:"${i}" ü ☃ \\/`, '2026-11-20T10:00:10+02:00', 'x', externalId);
      await clocked.accept({ events: [event] });
      const key = recordKeyString(event.record);
      expect(await ctx.redis.exists(keys.trace(key))).toBe(0);
      const expected = traceLine({ at, event_id: event.id, occurred_at: event.occurred_at, connector: 'shopify', step: 'received', detail: 'customer.upserted' });
      expect(await withScripts(ctx.redis).taxsyncReadTrace(keys.state(key), keys.event(key), keys.applied(key), keys.trace(key))).toEqual([expected]);
      expect(await readTrace(ctx.redis, keys, key)).toEqual([JSON.parse(expected)]);
    }
  });

  it("writes each replaced event's received line before what comes after it, in arrival order", async () => {
    await producer.accept({ events: [customerEvent('e1', '2026-11-20T10:00:10Z', 'one')] });
    await producer.accept({ events: [customerEvent('e2', '2026-11-20T10:00:20Z', 'two')] });
    await producer.accept({ events: [customerEvent('e0', '2026-11-20T10:00:00Z', 'zero')] });
    await producer.accept({ events: [customerEvent('e3', '2026-11-20T10:00:30Z', 'three')] });
    const keys = createKeys(ctx.prefix);
    const key = recordKeyString({ kind: 'customer', source: 'shopify', external_id: 'c-1' });
    const trace = await readTrace(ctx.redis, keys, key);
    expect(trace.map((t) => `${t.step} ${t.event_id}`)).toEqual(['received e1', 'received e2', 'stale e0', 'received e3']);
    // The newest one is still pending: written to the list only when it is applied or replaced.
    expect(await ctx.redis.llen(keys.trace(key))).toBe(3);
  });

  it('lets the later arrival win a tie and reports the same event twice as a duplicate', async () => {
    await producer.accept({ events: [customerEvent('a', '2026-11-20T10:00:10Z', 'first')] });
    const tie = await producer.accept({ events: [customerEvent('b', '2026-11-20T10:00:10Z', 'second')] });
    const again = await producer.accept({ events: [customerEvent('b', '2026-11-20T10:00:10Z', 'second')] });
    expect([tie.outcomes, again.outcomes]).toEqual([['queued'], ['duplicate']]);
  });

  it('remembers a delivery only together with its events', async () => {
    expect(await producer.isDuplicateDelivery('shopify', 'd-1')).toBe(false);
    await producer.accept({ events: [customerEvent('a', '2026-11-20T10:00:10Z', 'x')], delivery: { connector: 'shopify', id: 'd-1' } });
    expect(await producer.isDuplicateDelivery('shopify', 'd-1')).toBe(true);
  });

  it('writes dead letters in the same step as the events', async () => {
    const result = await producer.accept({
      events: [customerEvent('a', '2026-11-20T10:00:10Z', 'x', 'c-2')],
      deadLetters: [
        {
          queue: 'ingest',
          record: null,
          event: null,
          error: { code: 'INVALID_PAYLOAD', message: 'customers[0].email: expected string', retryable: false },
          http: null,
          attempts: 0,
          first_failed_at: '2026-11-20T10:00:10Z',
          last_failed_at: '2026-11-20T10:00:10Z',
        },
      ],
    });
    expect(result.deadLetters).toHaveLength(1);
    const stored = await createDeadLetterStore(queues['dead-letter']).get(result.deadLetters[0]!.id);
    expect(stored?.error.code).toBe('INVALID_PAYLOAD');
    expect(await queues.customers.getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('fails without writing anything when Redis is unreachable', async () => {
    const down = createRedis('redis://127.0.0.1:1', 'producer');
    down.on('error', () => {});
    const downQueues = createQueues(down, ctx.prefix);
    const downProducer = producerOn(down, downQueues);
    await expect(downProducer.accept({ events: [customerEvent('a', '2026-11-20T10:00:10Z', 'x')] })).rejects.toMatchObject({
      code: 'REDIS_UNAVAILABLE',
    });
    down.disconnect();
  });

  it('runs its transactions on a connection of its own with only the scripts they need, closed with the one it was given', async () => {
    const name = `lean-${ctx.prefix.replace(/[^a-z0-9-]/gi, '')}`;
    const given = createRedis(ctx.url, 'producer', { connectionName: name });
    await new Promise((resolve) => given.once('ready', resolve));
    const givenQueues = createQueues(given, ctx.prefix);
    const own = producerOn(given, givenQueues);
    const connections = async () => ((await ctx.redis.call('CLIENT', 'LIST')) as string).split('\n').filter((line) => line.includes(` name=${name} `)).length;
    await own.accept({ events: [customerEvent('a', '2026-11-20T10:00:10Z', 'x')] });
    expect(await givenQueues.customers.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(await connections()).toBe(2);
    // BullMQ defined its ~60 scripts on the given connection; a MULTI on it copies them all.
    expect(Object.keys((given as unknown as { scriptsSet: object }).scriptsSet).length).toBeGreaterThan(40);
    await closeQueues(givenQueues);
    await given.quit();
    for (let i = 0; i < 40 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await connections()).toBe(0);
  });
});
