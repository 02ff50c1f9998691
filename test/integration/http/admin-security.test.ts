import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import type { Operator } from '../../../src/config/index.js';
import { buildApp } from '../../../src/http/app.js';
import type { LoginRate } from '../../../src/http/admin/login.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { keptDelivery, pipelineDlqDeps } from '../../helpers/dead-letters.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const ALICE = 'alice-token-0123456789abcdef-0123456789abcdef';
const BOB = 'bob-token-fedcba9876543210-fedcba9876543210';
const METRICS = 'metrics-token-00112233445566778899aabbccddeeff';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };

const operators = (alice = ALICE): Operator[] => [
  { name: 'alice', token: new Secret(alice) },
  { name: 'bob', token: new Secret(BOB) },
];

describe('admin access and /metrics', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  const apps: FastifyInstance[] = [];

  async function build(options: { operators?: Operator[]; loginRate?: LoginRate; metricsToken?: string } = {}): Promise<FastifyInstance> {
    const app = await buildApp({
      connectors: {},
      producer: pipeline.producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 4096,
      rawBodyLimitBytes: 100,
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
      ...(options.metricsToken ? { metricsToken: new Secret(options.metricsToken) } : {}),
      admin: {
        operators: options.operators ?? operators(),
        sessions: { redis: pipeline.producerConnection, keys: pipeline.keys },
        ...(options.loginRate ? { loginRate: options.loginRate } : {}),
        queues: Object.values(pipeline.queues),
        dlq: (actor) => pipelineDlqDeps(pipeline, { actor }),
      },
    });
    apps.push(app);
    return app;
  }

  async function signIn(app: FastifyInstance, token: string, extra: Record<string, string> = {}) {
    const res = await app.inject({ method: 'POST', url: '/admin/login', headers: FORM, payload: new URLSearchParams({ token, ...extra }).toString() });
    expect(res.statusCode).toBe(303);
    const cookie = res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const page = await app.inject({ url: '/admin/dead-letters', headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    return { cookie, csrf: csrf!, res };
  }

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await pipeline.close();
  });

  it('records the operator whose token signed in as the audit actor, whatever name the client sends', async () => {
    const app = await build();
    await pipeline.producer.accept({ events: [], deadLetters: [keptDelivery('kept-1', {}), keptDelivery('kept-2', {})] });
    // A name typed at sign-in (the old form field) and an actor header are both ignored.
    const { cookie, csrf } = await signIn(app, BOB, { name: 'alice' });
    const web = await app.inject({
      method: 'POST',
      url: '/admin/dead-letters/discard',
      headers: { ...FORM, cookie, 'x-taxsync-actor': 'alice' },
      payload: new URLSearchParams({ id: 'kept-1', csrf }).toString(),
    });
    expect(web.statusCode).toBe(200);
    const api = await app.inject({
      method: 'POST',
      url: '/admin/dead-letters/discard',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${ALICE}`, 'x-taxsync-actor': 'bob' },
      payload: 'id=kept-2',
    });
    expect(api.statusCode).toBe(200);
    const audit = await createAuditLog(pipeline.producerConnection, pipeline.keys).list();
    expect(audit.map((a) => [a.actor, a.ids])).toEqual([
      ['admin:bearer:alice', ['kept-2']],
      ['admin:web:bob', ['kept-1']],
    ]);
  });

  it('ends a session on sign-out: the same cookie no longer opens a page, on any server', async () => {
    const app = await build();
    const other = await build();
    const { cookie, csrf } = await signIn(app, ALICE);
    expect((await other.inject({ url: '/admin/dead-letters', headers: { cookie } })).statusCode).toBe(200);
    const out = await app.inject({ method: 'POST', url: '/admin/logout', headers: { ...FORM, cookie }, payload: `csrf=${csrf}` });
    expect(out.statusCode).toBe(303);
    // A browser that kept the cookie (or anyone who copied it) is refused.
    expect((await app.inject({ url: '/admin/dead-letters', headers: { cookie } })).statusCode).toBe(401);
    expect((await other.inject({ url: '/admin/dead-letters', headers: { cookie } })).statusCode).toBe(401);
  });

  it("ends the sessions of a rotated token, and only that operator's", async () => {
    const before = await build();
    const alice = await signIn(before, ALICE);
    const bob = await signIn(before, BOB);
    // A restart with alice's token rotated.
    const after = await build({ operators: operators('alice-rotated-token-0123456789abcdef-012345') });
    expect((await after.inject({ url: '/admin/dead-letters', headers: { cookie: alice.cookie } })).statusCode).toBe(401);
    expect((await after.inject({ url: '/admin/dead-letters', headers: { cookie: bob.cookie } })).statusCode).toBe(200);
    expect((await after.inject({ url: '/admin/dead-letters', headers: { authorization: `Bearer ${ALICE}` } })).statusCode).toBe(401);
  });

  it('limits sign-in attempts per address, counted in Redis across two servers, with Retry-After', async () => {
    const rate = { max: 3, windowMs: 60_000 };
    const one = await build({ loginRate: rate });
    const two = await build({ loginRate: rate });
    const attempt = (app: FastifyInstance, token: string, remoteAddress = '198.51.100.7') =>
      app.inject({ method: 'POST', url: '/admin/login', headers: FORM, remoteAddress, payload: `token=${encodeURIComponent(token)}` });
    expect((await attempt(one, 'guess-1')).statusCode).toBe(401);
    expect((await attempt(two, 'guess-2')).statusCode).toBe(401);
    expect((await attempt(one, 'guess-3')).statusCode).toBe(401);
    const limited = await attempt(two, ALICE);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toMatchObject({ error: 'too_many_requests' });
    expect(limited.cookies).toEqual([]);
    // Another address is not held up by the first one's guesses.
    expect((await attempt(one, ALICE, '198.51.100.8')).statusCode).toBe(303);
  });

  it('serves /metrics only to this host without a token, and only with the bearer token when one is set', async () => {
    const open = await build();
    expect((await open.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect((await open.inject({ url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
    const remote = await open.inject({ url: '/metrics', remoteAddress: '203.0.113.9' });
    expect(remote.statusCode).toBe(401);
    expect(remote.body).toContain('TAXSYNC_METRICS_TOKEN');
    // A proxy on this host passing a remote client along is not this host.
    expect((await open.inject({ url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode).toBe(401);

    const guarded = await build({ metricsToken: METRICS });
    expect((await guarded.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(401);
    expect((await guarded.inject({ url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${METRICS}x` } })).statusCode).toBe(401);
    // The admin token is not the metrics token.
    expect((await guarded.inject({ url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${ALICE}` } })).statusCode).toBe(401);
    const ok = await guarded.inject({ url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${METRICS}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# HELP');
  });
});
