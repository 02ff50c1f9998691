/**
 * DESIGN.md invariant 7, end to end: a daemon (webhooks + workers, LOG_LEVEL=debug) runs every
 * connector's fixtures (valid, ignored, invalid and a wrongly signed one), an API fault until a
 * record is dead-lettered, a forced token expiry (401 → renewal), refunds that wait in vain. Then
 * everything taxsync wrote is searched for every secret it held or saw: the four webhook secrets
 * (and the ERP key they decode to), the client secret, every access token the emulator issued, and
 * every signature header the test sent, and the platforms' API credentials (the workers use them
 * for the refunds' missing originals; a local platform fake refuses them all with a 401). Where taxsync wrote: its logs, every Redis key under the
 * prefix (all types, BullMQ job hashes with their failure reasons included), the dead-letter
 * entries, /metrics, /healthz, /readyz and the answers to the webhooks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { CONNECTORS } from '../../src/connectors/registry.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { E2E_SECRETS, startDaemon, type Daemon, type E2eConnector } from '../helpers/daemon.js';
import { erpCustomer } from '../helpers/erp-events.js';
import { closeServer, listenLocal } from '../helpers/backfill-fake.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const CONNECTOR_IDS: readonly E2eConnector[] = ['shopify', 'stripe', 'woocommerce', 'erp'];

interface FixtureFile {
  headers?: Record<string, string>;
  body: unknown;
  contentType?: string;
}

function fixtures(connector: E2eConnector): { name: string; file: FixtureFile }[] {
  const dir = new URL(`../fixtures/connectors/${connector}/`, import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => ({ name, file: JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as FixtureFile }));
}

/** Every value of every key under `prefix`, by type, labelled with its key. */
async function dumpRedis(redis: Redis, prefix: string): Promise<{ where: string; text: string }[]> {
  const out: { where: string; text: string }[] = [];
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
    for (const key of keys) {
      const type = await redis.type(key);
      let values: string[];
      switch (type) {
        case 'string':
          values = [(await redis.getBuffer(key))?.toString('utf8') ?? ''];
          break;
        case 'hash':
          values = Object.entries(await redis.hgetall(key)).flat();
          break;
        case 'list':
          values = await redis.lrange(key, 0, -1);
          break;
        case 'set':
          values = await redis.smembers(key);
          break;
        case 'zset':
          values = await redis.zrange(key, '0', '-1', 'WITHSCORES');
          break;
        case 'stream':
          values = (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
          break;
        case 'none':
          continue; // expired or removed since the scan
        default:
          throw new Error(`redis key ${key} has a type this dump does not read: ${type}`);
      }
      // The key name itself is written by taxsync too.
      out.push({ where: `redis ${type} ${key}`, text: [key, ...values].join('\n') });
    }
  }
  return out;
}

describe('secrets in an end-to-end run', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;
  let platforms: Server | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
    if (platforms) await closeServer(platforms);
    platforms = undefined;
  });

  it('never reach the logs, Redis, the dead-letter queue, traces, metrics or error messages', async () => {
    const logs: string[] = [];
    const tokens = new Set<string>();
    const platformCalls: string[] = [];
    platforms = createServer((req, res) => {
      platformCalls.push(req.url ?? '');
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":"Invalid API key or access token"}');
    });
    const platformUrl = await listenLocal(platforms);
    const PLATFORM_SECRETS = {
      STRIPE_API_KEY: 'rk_test_platform-key-NEVER-PRINT',
      SHOPIFY_ACCESS_TOKEN: 'shpat_platform-token-NEVER-PRINT',
      WOOCOMMERCE_CONSUMER_KEY: 'ck_platform-key-NEVER-PRINT',
      WOOCOMMERCE_CONSUMER_SECRET: 'cs_platform-secret-NEVER-PRINT',
    };
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      env: {
        LOG_LEVEL: 'debug',
        TAXSYNC_MAX_ATTEMPTS: '2',
        TAXSYNC_WAIT_DEADLINE_S: '2',
        TAXSYNC_REFUND_WAIT: '2s',
        ...PLATFORM_SECRETS,
        STRIPE_API_URL: platformUrl,
        SHOPIFY_API_URL: `${platformUrl}/admin/api/2025-10`,
        WOOCOMMERCE_API_URL: platformUrl,
      },
      // The first authenticated call finds its token expired: taxsync must renew it (a 401 path).
      emulator: { faults: [{ kind: 'expire_token', route: '*', times: 1 }] },
      logDestination: new Writable({
        write(chunk: Buffer, _e, done) {
          logs.push(chunk.toString());
          done();
        },
      }),
      // Every token the emulator issues, and every one presented to it.
      onEmulator(emulator) {
        const issue = emulator.authority.issue.bind(emulator.authority);
        const check = emulator.authority.check.bind(emulator.authority);
        emulator.authority.issue = (clientId, clientSecret) => {
          const token = issue(clientId, clientSecret);
          if (token) tokens.add(token.access_token);
          return token;
        };
        emulator.authority.check = (authorization) => {
          const token = /^Bearer\s+(\S+)/i.exec(authorization ?? '')?.[1];
          if (token !== undefined) tokens.add(token);
          return check(authorization);
        };
      },
    });
    const d = daemon;
    const signatures = new Set<string>();
    const answers: { where: string; text: string }[] = [];

    /** Posts a body signed by `secret` (the configured one unless given), remembering the signature. */
    async function post(connector: E2eConnector, body: unknown, options: { headers?: Record<string, string>; contentType?: string; secret?: string } = {}) {
      const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const signed = CONNECTORS[connector]!.sign(raw, options.secret ?? E2E_SECRETS[connector], new Date());
      for (const [name, value] of Object.entries(signed)) {
        if (!/signature|hmac/.test(name)) continue;
        signatures.add(value);
        // The digest alone, as it would appear if a header were parsed and logged in parts.
        for (const part of value.split(/[ ,]/)) {
          const digest = part.replace(/^v1=/, '');
          if (digest.length >= 32) signatures.add(digest);
        }
      }
      const res = await fetch(`${d.webhookUrl}/webhooks/${connector}`, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': options.contentType ?? 'application/json', ...options.headers, ...signed },
      });
      const text = await res.text();
      answers.push({ where: `answer to POST /webhooks/${connector} (${res.status})`, text });
      return { status: res.status, text };
    }

    const deadLetters = createDeadLetterStore(d.queues['dead-letter']);

    // 1. A record the API keeps failing (500) until it is dead-lettered, after the token renewal.
    d.emulator.faults.add({ kind: 'error', route: 'customers.upsert', status: 500 });
    expect((await post('erp', erpCustomer('C-FAULTY', 1))).status).toBe(202);
    await eventually(async () => (await deadLetters.list()).some((e) => e.record?.external_id === 'C-FAULTY'), 20_000);
    // The first call (C-FAULTY's) found its token expired: taxsync renewed it and went on.
    expect(d.emulator.faults.list().find((r) => r.kind === 'expire_token')?.fired).toBe(1);
    d.emulator.faults.clear();

    // 2. Every fixture of every connector, signed: events, ignored topics, invalid payloads (→
    //    INVALID_PAYLOAD dead letters), WooCommerce's ping, refunds whose originals never come.
    for (const connector of CONNECTOR_IDS) {
      for (const { name, file } of fixtures(connector)) {
        const res = await post(connector, file.body, { headers: file.headers ?? {}, ...(file.contentType ? { contentType: file.contentType } : {}) });
        expect([200, 202], `${connector}/${name}: ${res.text}`).toContain(res.status);
      }
    }
    // 3. Wrong secrets: rejected (401), and their signatures must not be logged either.
    for (const connector of CONNECTOR_IDS) {
      const wrong = connector === 'erp' ? 'whsec_bm90LXRoZS1lcnAtc2VjcmV0LWF0LWFsbA==' : `${E2E_SECRETS[connector]}-not-it`;
      expect((await post(connector, erpCustomer('C-UNSIGNED', 1), { secret: wrong })).status).toBe(401);
    }

    await eventually(() => d.idle(), 25_000);
    const entries = await deadLetters.list();
    const codes = new Set(entries.map((e) => e.error.code));
    expect(codes.has('INVALID_PAYLOAD'), `dead-letter codes: ${[...codes].join(', ')}`).toBe(true);
    expect(entries.some((e) => e.record?.external_id === 'C-FAULTY' && e.http?.response?.status === 500)).toBe(true);
    // Two tokens at least, and a 401 the API answered.
    expect(d.emulator.requestLog.entries().some((e) => e.status === 401)).toBe(true);
    expect(tokens.size).toBeGreaterThanOrEqual(2);
    // The logs were captured at debug level (so the search below has something to search).
    expect(logs.some((line) => (JSON.parse(line) as { level: number }).level === 20)).toBe(true);
    expect(logs.join('')).toContain('webhook rejected: signature');
    // The waiting refunds asked their platforms (refused): the failures were logged, with codes.
    expect(platformCalls.length).toBeGreaterThan(0);
    expect(logs.join('')).toContain('"code":"ORIGINAL_FETCH_FAILED"');

    // What to look for.
    const erpKey = Buffer.from(E2E_SECRETS.erp.replace(/^whsec_/, ''), 'base64').toString('utf8');
    const needles: { what: string; value: string }[] = [
      ...CONNECTOR_IDS.map((c) => ({ what: `${c} webhook secret`, value: E2E_SECRETS[c] })),
      { what: 'erp webhook secret (base64 part)', value: E2E_SECRETS.erp.replace(/^whsec_/, '') },
      { what: 'erp webhook key (decoded)', value: erpKey },
      { what: 'client secret', value: DEFAULT_CLIENT.clientSecret },
      ...Object.entries(PLATFORM_SECRETS).map(([name, value]) => ({ what: name, value })),
      { what: 'WooCommerce basic auth', value: Buffer.from(`${PLATFORM_SECRETS.WOOCOMMERCE_CONSUMER_KEY}:${PLATFORM_SECRETS.WOOCOMMERCE_CONSUMER_SECRET}`).toString('base64') },
      ...[...tokens].flatMap((token, i) => [
        { what: `access token #${i + 1}`, value: token },
        { what: `access token #${i + 1} (signature part)`, value: token.split('.')[2] ?? token },
      ]),
      ...[...signatures].map((value, i) => ({ what: `webhook signature #${i + 1} (${value.slice(0, 12)}…)`, value })),
    ];
    expect(needles.every((n) => n.value.length >= 16)).toBe(true);

    // Where to look.
    const metrics = await (await fetch(`${d.webhookUrl}/metrics`)).text();
    expect(metrics).toContain('taxsync_webhooks_total');
    const haystacks: { where: string; text: string }[] = [
      ...logs.map((line, i) => ({ where: `log line ${i + 1}`, text: line })),
      ...(await dumpRedis(ctx.redis, ctx.prefix)),
      ...entries.map((e) => ({ where: `dead letter ${e.id} (${e.error.code})`, text: JSON.stringify(e) })),
      { where: '/metrics', text: metrics },
      { where: '/healthz', text: await (await fetch(`${d.webhookUrl}/healthz`)).text() },
      { where: '/readyz', text: await (await fetch(`${d.webhookUrl}/readyz`)).text() },
      ...answers,
    ];
    expect(haystacks.some((h) => h.where.startsWith('redis hash') && h.where.includes(':customers:'))).toBe(true);
    expect(haystacks.some((h) => h.where.startsWith('redis list') && h.where.includes('trace'))).toBe(true);

    const found: string[] = [];
    for (const { where, text } of haystacks) {
      for (const { what, value } of needles) {
        const at = text.indexOf(value);
        if (at >= 0) found.push(`${what} in ${where}: …${text.slice(Math.max(0, at - 80), at + value.length + 20)}…`);
      }
    }
    expect(found).toEqual([]);
  }, 60_000);
});
