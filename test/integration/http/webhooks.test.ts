import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer } from '../../../src/queue/producer.js';
import { useRedis } from '../../helpers/redis.js';
import { testConnector, testSettings } from '../../helpers/test-connector.js';

const SECRET = 'route-test-secret';

function event(id: string, externalId = 'c-1') {
  return {
    id,
    type: 'customer.upserted',
    occurred_at: '2026-11-20T10:00:00Z',
    connector: 'test',
    record: { kind: 'customer', source: 'api', external_id: externalId },
    data: { name: 'Ada' },
  };
}

describe('POST /webhooks/:connector', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let app: FastifyInstance;
  let logLines: string[];

  async function build(conn: Redis) {
    logLines = [];
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk: Buffer, _e, done) {
          logLines.push(chunk.toString());
          done();
        },
      }),
    });
    queues = createQueues(conn, ctx.prefix);
    const producer = createProducer({
      queues,
      connection: conn,
      keys: createKeys(ctx.prefix),
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    return buildApp({
      connectors: { test: { connector: testConnector, settings: testSettings(SECRET), connection: { id: 'test', source: testSettings(SECRET).source, externalIdPrefix: '' } } },
      producer,
      logger,
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 4096,
      rawBodyLimitBytes: 100,
      ready: async () => (await conn.ping()) === 'PONG',
      health: { usesEmulator: true },
    });
  }

  function post(body: unknown, headers: Record<string, string> = {}, secret = SECRET) {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    return app.inject({
      method: 'POST',
      url: '/webhooks/test',
      payload,
      headers: { 'content-type': 'application/json', ...testConnector.sign(Buffer.from(payload), secret, new Date()), ...headers },
    });
  }

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    app = await build(connection);
  });

  afterEach(async () => {
    await app.close();
    await closeQueues(queues);
    connection.disconnect();
  });

  it('answers 202 with the count only after the events are in Redis', async () => {
    const res = await post({ delivery: 'd-1', events: [event('e-1'), event('e-2', 'c-2')] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'accepted', accepted: 2, queued: 2 });
    expect(await queues.customers.getJobCounts('waiting')).toEqual({ waiting: 2 });
  });

  it('answers 200 to a duplicate delivery and queues nothing more', async () => {
    await post({ delivery: 'd-1', events: [event('e-1')] });
    const again = await post({ delivery: 'd-1', events: [event('e-1')] });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'duplicate' });
    expect(await ctx.redis.hget(`${ctx.prefix}:state:customer|api|c-1`, 'seq')).toBe('1');
  });

  it('answers 200 to an ignored topic', async () => {
    const res = await post({ topic: 'ignore.me' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ignored' });
  });

  it('answers 401 to a missing or wrong signature, queues nothing and logs the reason without the signature', async () => {
    const payload = JSON.stringify({ delivery: 'd-2', events: [event('e-1')] });
    const missing = await app.inject({ method: 'POST', url: '/webhooks/test', payload, headers: { 'content-type': 'application/json' } });
    const wrong = await post(JSON.parse(payload), {}, 'not-the-secret');
    expect([missing.statusCode, wrong.statusCode]).toEqual([401, 401]);
    expect(await queues.customers.getJobCounts('waiting')).toEqual({ waiting: 0 });
    const wrongSignature = testConnector.sign(Buffer.from(payload), 'not-the-secret', new Date())['x-test-signature'];
    const logs = logLines.join('');
    expect(logs).toContain('signature');
    expect(logs).not.toContain(wrongSignature);
  });

  it('keeps a signed but malformed payload as an INVALID_PAYLOAD dead letter and answers 202', async () => {
    const res = await post('{"delivery": "d-3", "events": [ not json');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 0, dead_lettered: 1 });
    const [entry] = await createDeadLetterStore(queues['dead-letter']).list();
    expect(entry?.error.code).toBe('INVALID_PAYLOAD');
    expect(entry?.raw?.body).toContain('not json');
  });

  it('names the failing field in the dead letter and truncates the raw body at the limit', async () => {
    const res = await post({ delivery: 'd-4', events: [{ ...event('e-1'), data: { name: 'x'.repeat(200) }, type: 'nope' }] });
    expect(res.statusCode).toBe(202);
    const [entry] = await createDeadLetterStore(queues['dead-letter']).list();
    expect(Object.keys(entry?.error.fields ?? {})).toEqual(['events[0]']);
    expect(entry?.raw?.body_truncated).toBe(true);
    expect(entry?.raw?.body.length).toBe(100);
  });

  it('keeps the payload when the connector itself throws', async () => {
    const res = await post({ topic: 'throw' });
    expect(res.statusCode).toBe(202);
    expect(await createDeadLetterStore(queues['dead-letter']).count()).toBe(1);
  });

  it('answers 413 over the body limit, 415 for another content type and 404 for an unknown connector', async () => {
    const big = await post({ padding: 'x'.repeat(5000) });
    const form = await post({ a: 1 }, { 'content-type': 'text/plain' });
    const unknown = await app.inject({ method: 'POST', url: '/webhooks/nope', payload: '{}', headers: { 'content-type': 'application/json' } });
    expect([big.statusCode, form.statusCode, unknown.statusCode]).toEqual([413, 415, 404]);
    expect(await queues.customers.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('answers 503 with Retry-After when Redis is unreachable, and /readyz says so', async () => {
    const down = createRedis('redis://127.0.0.1:1', 'producer');
    down.on('error', () => {});
    const downApp = await build(down);
    const payload = JSON.stringify({ delivery: 'd-5', events: [event('e-1')] });
    const res = await downApp.inject({
      method: 'POST',
      url: '/webhooks/test',
      payload,
      headers: { 'content-type': 'application/json', ...testConnector.sign(Buffer.from(payload), SECRET, new Date()) },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect((await downApp.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    await downApp.close();
    down.disconnect();
  });

  it('serves /healthz, /readyz and /metrics with webhook outcomes', async () => {
    await post({ delivery: 'd-6', events: [event('e-1')] });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ status: 'ok', api: { kind: 'emulator' } });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('taxsync_webhooks_total{connector="test",connection="test",outcome="accepted"} 1');
    expect(metrics).toContain('taxsync_events_received_total{connector="test",connection="test",outcome="queued"} 1');
  });
});
