import { readFileSync } from 'node:fs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { buildApp } from '../../../src/http/app.js';
import type { AdminDeps } from '../../../src/http/admin/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { keptDelivery, pipelineDlqDeps } from '../../helpers/dead-letters.js';
import { collectLines } from '../../helpers/log-lines.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const TOKEN = 'adm1n-t0ken-for-the-web-view-tests';
const BOB = 'b0b-has-a-t0ken-of-his-own-for-these-tests';
const BROWSER = { accept: 'text/html,application/xhtml+xml' };

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/connectors/shopify/customers-create-tax-exemptions.json', import.meta.url), 'utf8')) as { body: unknown };

/** A delivery today's connector reads (a replay accepts it), with markup in its message. */
const kept = (id: string) => keptDelivery(id, fixture.body, { message: 'payload <b>does not</b> match the schema' });

describe('the admin routes', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let logLines: string[];

  async function build(admin: boolean): Promise<FastifyInstance> {
    const deps: AdminDeps = {
      operators: [
        { name: 'alice', token: new Secret(TOKEN) },
        { name: 'bob', token: new Secret(BOB) },
      ],
      sessions: { redis: pipeline.producerConnection, keys: pipeline.keys },
      queues: Object.values(pipeline.queues),
      dlq: (actor) => pipelineDlqDeps(pipeline, { actor }),
    };
    const logger = createLogger({ level: 'debug', destination: collectLines(logLines) });
    return buildApp({
      connectors: {},
      producer: pipeline.producer,
      logger,
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 4096,
      rawBodyLimitBytes: 100,
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
      ...(admin ? { admin: deps } : {}),
    });
  }

  /** Signs in as a browser would; returns the cookie header to send and the page's CSRF token. */
  async function signIn(token = TOKEN): Promise<{ cookie: string; csrf: string }> {
    const res = await app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams({ token, next: '/admin/dead-letters' }).toString(),
    });
    expect(res.statusCode).toBe(303);
    const cookie = res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const listPage = await app.inject({ url: '/admin/dead-letters', headers: { cookie, ...BROWSER } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(listPage.body)?.[1];
    expect(csrf).toBeDefined();
    return { cookie, csrf: csrf! };
  }

  function seen(...responses: LightMyRequestResponse[]): string {
    return [...responses.map((r) => `${JSON.stringify(r.headers)}\n${r.body}`), ...logLines].join('\n');
  }

  beforeEach(async () => {
    logLines = [];
    pipeline = await createPipeline(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await app.close();
    await pipeline.close();
  });

  it('answer 404 like any unknown route when no operator token is configured', async () => {
    app = await build(false);
    for (const url of ['/admin', '/admin/dead-letters', '/admin/login', '/admin/queues', '/admin/queues/api/queues']) {
      const res = await app.inject({ url, headers: { authorization: `Bearer ${TOKEN}`, ...BROWSER } });
      expect(res.statusCode, url).toBe(404);
    }
    expect((await app.inject({ method: 'POST', url: '/admin/login', payload: { token: TOKEN } })).statusCode).toBe(404);
  });

  it('refuse a missing or wrong token with 401, and let the right one in', async () => {
    app = await build(true);
    for (const url of ['/admin/dead-letters', '/admin/queues', '/admin/queues/api/queues']) {
      const missing = await app.inject({ url });
      expect(missing.statusCode, url).toBe(401);
      expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(missing.json()).toMatchObject({ error: 'unauthorized' });
      for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer ', `Basic ${TOKEN}`, TOKEN]) {
        expect((await app.inject({ url, headers: { authorization } })).statusCode, `${url} ${authorization}`).toBe(401);
      }
      expect((await app.inject({ url, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, url).toBe(200);
    }
    // A browser asking for a page gets the sign-in form with its 401.
    const page = await app.inject({ url: '/admin/dead-letters?code=API_INVALID', headers: BROWSER });
    expect(page.statusCode).toBe(401);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<form method="post" action="/admin/login">');
    expect(page.body).toContain('value="/admin/dead-letters?code=API_INVALID"');
    // A forged cookie is no session.
    expect((await app.inject({ url: '/admin/dead-letters', headers: { cookie: `taxsync_admin=${TOKEN}` } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/admin/dead-letters', headers: { cookie: 'taxsync_admin=99999999999999.forged' } })).statusCode).toBe(401);
  });

  it('signs a browser in with an HttpOnly, SameSite=Strict, Secure cookie that is not the token, and never shows or logs the token', async () => {
    app = await build(true);
    const wrong = await app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: `token=${encodeURIComponent(`${TOKEN}-not`)}`,
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain("not an operator's admin token");
    expect(wrong.cookies).toEqual([]);

    const crossSite = await app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      payload: `token=${encodeURIComponent(TOKEN)}`,
    });
    expect(crossSite.statusCode).toBe(403);

    const ok = await app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:8080', host: 'localhost:8080' },
      payload: new URLSearchParams({ token: TOKEN, next: 'https://evil.example/' }).toString(),
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/admin/dead-letters');
    const session = ok.cookies.find((c) => c.name === 'taxsync_admin')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin', secure: true });
    expect(session.value).not.toContain(TOKEN);

    const { cookie, csrf } = await signIn();
    const listPage = await app.inject({ url: '/admin/dead-letters', headers: { cookie, ...BROWSER } });
    expect(listPage.statusCode).toBe(200);
    expect(listPage.body).toContain('admin:web:alice');
    expect(listPage.headers['content-security-policy']).toContain("default-src 'none'");
    expect(seen(wrong, crossSite, ok, listPage)).not.toContain(TOKEN);
    // A proxy's own basic auth in front of /admin does not hide the session; a wrong bearer still fails.
    const behindProxy = await app.inject({ url: '/admin/dead-letters', headers: { cookie, ...BROWSER, authorization: 'Basic b3BzOnNlY3JldA==' } });
    expect(behindProxy.statusCode).toBe(200);
    const wrongBearer = await app.inject({ url: '/admin/dead-letters', headers: { cookie, ...BROWSER, authorization: 'Bearer not-the-token' } });
    expect(wrongBearer.statusCode).toBe(401);

    const out = await app.inject({ method: 'POST', url: '/admin/logout', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: `csrf=${csrf}` });
    expect(out.statusCode).toBe(303);
    expect(out.cookies.find((c) => c.name === 'taxsync_admin')?.maxAge).toBe(0);
  });

  it('shows Bull Board read-only: its actions answer an error and change nothing', async () => {
    app = await build(true);
    const headers = { authorization: `Bearer ${TOKEN}` };
    const queues = (await app.inject({ url: '/admin/queues/api/queues', headers })).json<{ queues: { name: string; readOnlyMode: boolean }[] }>();
    expect(queues.queues.map((q) => q.name).sort()).toEqual(['customers', 'dead-letter', 'transactions', 'vat-submissions']);
    expect(queues.queues.every((q) => q.readOnlyMode)).toBe(true);
    expect((await app.inject({ url: '/admin/queues', headers })).statusCode).toBe(200);

    await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1')] });
    for (const [method, url] of [
      ['PUT', '/admin/queues/api/queues/dead-letter/clean/waiting'],
      ['PUT', '/admin/queues/api/queues/dead-letter/retry/failed'],
      ['PUT', '/admin/queues/api/queues/dead-letter/pause'],
      ['PUT', '/admin/queues/api/queues/pause'],
      ['POST', '/admin/queues/api/queues/dead-letter/add'],
      ['PUT', '/admin/queues/api/queues/dead-letter/empty'],
      ['PUT', '/admin/queues/api/queues/dead-letter/obliterate'],
      ['PUT', '/admin/queues/api/queues/dead-letter/kept-1/clean'],
      ['PATCH', '/admin/queues/api/queues/dead-letter/kept-1/update-data'],
    ] as const) {
      const res = await app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
    }
    expect(await pipeline.deadLetters.count()).toBe(1);
    expect(await pipeline.queues['dead-letter'].isPaused()).toBe(false);
  });

  it('lists, filters and shows entries, escaping what they hold', async () => {
    app = await build(true);
    await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1'), kept('kept-2')] });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const all = await app.inject({ url: '/admin/dead-letters', headers });
    expect(all.body).toContain('2 entries (ingest 2; INVALID_PAYLOAD 2)');
    expect(all.body).toContain('payload &lt;b&gt;does not&lt;/b&gt; match');
    expect(all.body).not.toContain('<b>does not</b>');
    expect((await app.inject({ url: '/admin/dead-letters?code=API_INVALID', headers })).body).toContain('0 entries');
    expect((await app.inject({ url: '/admin/dead-letters?source=shopify&text=delivery-kept-2', headers })).body).toContain('1 entry');
    const bad = await app.inject({ url: '/admin/dead-letters?since=yesterday', headers });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('since must be an ISO 8601 date');
    const show = await app.inject({ url: '/admin/dead-letters/entries/kept-1', headers });
    expect(show.statusCode).toBe(200);
    expect(show.body).toContain('delivery-kept-1');
    expect((await app.inject({ url: '/admin/dead-letters/entries/nope', headers })).statusCode).toBe(404);
  });

  it('pages the list 50 at a time, newest first, keeping the filter', async () => {
    app = await build(true);
    const at = (n: number) => new Date(Date.UTC(2026, 10, 21, 0, 0, n)).toISOString();
    const entries = Array.from({ length: 52 }, (_, n) => keptDelivery(`kept-${String(n).padStart(2, '0')}`, {}, { at: at(n) }));
    await pipeline.producer.accept({ events: [], deadLetters: entries });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const rows = (body: string) => [...body.matchAll(/href="\/admin\/dead-letters\/entries\/([^"]+)"/g)].map((m) => m[1]);
    const first = await app.inject({ url: '/admin/dead-letters?queue=ingest', headers });
    expect(first.body).toContain('52 entries (ingest 52; INVALID_PAYLOAD 52); showing 1–50');
    expect(rows(first.body)).toHaveLength(50);
    expect(rows(first.body)[0]).toBe('kept-51');
    expect(first.body).toContain('href="/admin/dead-letters?queue=ingest&amp;offset=50">older');
    const second = await app.inject({ url: '/admin/dead-letters?queue=ingest&offset=50', headers });
    expect(rows(second.body)).toEqual(['kept-01', 'kept-00']);
    expect(second.body).toContain('showing 51–52');
    expect(second.body).toContain('href="/admin/dead-letters?queue=ingest&amp;offset=0">← newer');
  });

  it('refuses a cookie POST without the CSRF token or from another site, then discards and audits when confirmed', async () => {
    app = await build(true);
    await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1'), kept('kept-2')] });
    const { cookie, csrf } = await signIn();
    // As the CLI: a discard needs ids, a filter or all=1, never everything by default.
    expect((await app.inject({ url: '/admin/dead-letters/discard', headers: { cookie } })).statusCode).toBe(400);
    const confirm = await app.inject({ url: '/admin/dead-letters/discard?id=kept-1', headers: { cookie } });
    expect(confirm.body).toContain('Discard 1 entry (ingest 1; INVALID_PAYLOAD 1)?');
    expect(confirm.body).toContain(`name="csrf" value="${csrf}"`);
    const post = (payload: Record<string, string>, extra: Record<string, string> = {}) =>
      app.inject({
        method: 'POST',
        url: '/admin/dead-letters/discard',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...extra },
        payload: new URLSearchParams(payload).toString(),
      });
    expect((await post({ id: 'kept-1' })).statusCode).toBe(403);
    expect((await post({ id: 'kept-1', csrf: `${csrf}x` })).statusCode).toBe(403);
    expect((await post({ id: 'kept-1', csrf }, { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    expect((await post({ id: 'kept-1', csrf }, { origin: 'https://evil.example', host: 'localhost:8080' })).statusCode).toBe(403);
    expect(await pipeline.deadLetters.count()).toBe(2);

    const done = await post({ id: 'kept-1', csrf }, { 'sec-fetch-site': 'same-origin' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('1 discarded');
    expect(await pipeline.deadLetters.get('kept-1')).toBeUndefined();
    const [audit] = await createAuditLog(pipeline.producerConnection, pipeline.keys).list();
    expect(audit).toMatchObject({ actor: 'admin:web:alice', action: 'discard', ids: ['kept-1'], count: 1 });
  });

  it('replays the filtered selection through the dead-letter tools, audited as the web actor', async () => {
    app = await build(true);
    await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1'), kept('kept-2')] });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const confirm = await app.inject({ url: '/admin/dead-letters/replay?text=delivery-kept-2', headers });
    expect(confirm.body).toContain('Replay 1 entry');
    expect(confirm.body).toContain('name="id" value="kept-2"');
    const res = await app.inject({
      method: 'POST',
      url: '/admin/dead-letters/replay',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([
        ['id', 'kept-2'],
        ['text', 'delivery-kept-2'],
      ]).toString(),
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('1 accepted');
    expect(await pipeline.deadLetters.get('kept-2')).toBeUndefined();
    expect(await pipeline.deadLetters.get('kept-1')).toBeDefined();
    const [audit] = await createAuditLog(pipeline.producerConnection, pipeline.keys).list();
    expect(audit).toMatchObject({ actor: 'admin:bearer:alice', action: 'replay', ids: ['kept-2'], filter: { text: 'delivery-kept-2' }, count: 1 });
    expect(seen(confirm, res)).not.toContain(TOKEN);
  });
});
