/**
 * Fuzzes the webhook routes of a real webhook server (config, connectors, producer and Redis as
 * `taxsync serve` builds them): random bytes, truncated and mutated connector fixtures, missing,
 * wrong, garbled and stale signature headers, huge headers, odd content types and methods, empty
 * bodies, deep nesting, numbers where strings go, unicode, unknown connectors. Most requests go
 * through `inject()` (fast); one in ten goes over a real socket.
 *
 * It proves that every answer is one documented in docs/connectors.md ("What taxsync answers"),
 * that nothing reaches Redis (no job, no dead letter, no key at all) unless it was signed with the
 * right secret, that signed garbage is dead-lettered rather than crashing, that nothing is logged
 * at error level (a connector that throws, a failed store, a 500), and that the heap stays bounded.
 *
 * The inputs come from a seeded PRNG, so a run is reproducible:
 * - short form (in `npm test`): 2,000 requests per run, spread over both tests;
 * - long form: `npm run test:fuzz` (TAXSYNC_FUZZ_REQUESTS=10000, this file only);
 * - TAXSYNC_FUZZ_REQUESTS=<n> and TAXSYNC_FUZZ_SEED=<int> choose the count and the seed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CONNECTORS } from '../../src/connectors/registry.js';
import { seededRandom } from '../../src/emulator/faults.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import type { QueueName } from '../../src/queue/names.js';
import { createLifecycle, type Lifecycle } from '../../src/daemon/lifecycle.js';
import { startServe } from '../../src/daemon/serve.js';
import { E2E_SECRETS, e2eEnv, type E2eConnector } from '../helpers/daemon.js';
import { useRedis } from '../helpers/redis.js';

const TOTAL = Number(process.env.TAXSYNC_FUZZ_REQUESTS ?? '2000');
const SEED = Number(process.env.TAXSYNC_FUZZ_SEED ?? '20261120');
/** Half the requests are unsigned (or mis-signed), half signed. */
const PER_TEST = Math.max(50, Math.ceil(TOTAL / 2));
const TIMEOUT_MS = Math.max(30_000, PER_TEST * 30);
/** Requests in flight at once. */
const PARALLEL = 16;
/** docs/connectors.md, "What taxsync answers" (400: a signed JSON body over the structural limits, refused before parsing). */
const DOCUMENTED = [200, 202, 400, 401, 404, 413, 415, 503];
/**
 * Node's HTTP parser answers 431 itself, before taxsync sees the request, when the headers exceed
 * its limit (16 KiB by default): the only other answer a socket request may get.
 */
const NODE_HEADER_LIMIT = 16 * 1024;
const BODY_LIMIT = 64 * 1024;
const KNOWN: readonly E2eConnector[] = ['shopify', 'stripe', 'woocommerce', 'erp'];

type Rng = () => number;
const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, items.length)] as T;

interface Fixture {
  name: string;
  headers: Record<string, string>;
  raw: Buffer;
  contentType: string;
}

function loadFixtures(connector: string): Fixture[] {
  const dir = new URL(`../fixtures/connectors/${connector}/`, import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((name) => {
      const f = JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as { headers?: Record<string, string>; body: unknown; contentType?: string };
      return {
        name,
        headers: f.headers ?? {},
        raw: Buffer.from(typeof f.body === 'string' ? f.body : JSON.stringify(f.body)),
        contentType: f.contentType ?? 'application/json',
      };
    });
}
const FIXTURES: Record<E2eConnector, Fixture[]> = {
  shopify: loadFixtures('shopify'),
  stripe: loadFixtures('stripe'),
  woocommerce: loadFixtures('woocommerce'),
  erp: loadFixtures('erp'),
};

const UNICODE = ['é', 'ß', '漢字', '🧾', '\u0000', '\u202e', '\ud800', '\uffff', 'Ω≈ç√', '\n\r\t', '"\\', '\u00a0'];

function randomString(rng: Rng, max: number): string {
  let out = '';
  const n = int(rng, max + 1);
  for (let i = 0; i < n; i += 1) out += rng() < 0.2 ? pick(rng, UNICODE) : String.fromCharCode(32 + int(rng, 95));
  return out;
}

function randomBytes(rng: Rng, max: number): Buffer {
  const out = Buffer.alloc(int(rng, max + 1));
  for (let i = 0; i < out.length; i += 1) out[i] = int(rng, 256);
  return out;
}

/** JSON text nested `depth` deep: arrays or objects. */
function deepNestText(rng: Rng, depth: number): string {
  return rng() < 0.5 ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Kept shallow enough for JSON.stringify in the test; the deepest bodies are built as text. */
function deepNest(rng: Rng): unknown {
  return JSON.parse(deepNestText(rng, 20 + int(rng, 300)));
}

/** A value to put where another was: numbers for strings, strings for numbers, odd shapes. */
function oddValue(rng: Rng): unknown {
  switch (int(rng, 16)) {
    case 0:
      return null;
    case 1:
      return int(rng, 1e9) - 5e8;
    case 2:
      return pick(rng, [1e308, -1e308, 5e-324, 0.1 + 0.2, -0, 2 ** 53 + 1, 123.456789]);
    case 3:
      return pick(rng, ['NaN', 'Infinity', '-0', '1e9999', '0x1F', ' 12 ', '12,50', '']);
    case 4:
      return randomString(rng, 40);
    case 5:
      return 'x'.repeat(int(rng, 20_000));
    case 6:
      return rng() < 0.5;
    case 7:
      return [];
    case 8:
      return {};
    case 9:
      return deepNest(rng);
    case 10:
      return [oddValue(rng), oddValue(rng)];
    case 11:
      return { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } };
    case 12:
      return pick(rng, ['2026-02-30T25:61:00Z', '0000-00-00', 'yesterday', '2026-11-20T10:00:00+99:00', '9999-12-31T23:59:59Z']);
    case 13:
      return pick(rng, ['USD ', 'usd', 'XXX', 'ZZZ', '€']);
    case 14:
      return String(int(rng, 1e6));
    default:
      return Array.from({ length: int(rng, 500) }, () => int(rng, 10));
  }
}

/** Replaces, deletes or adds a few members anywhere in a parsed JSON value. */
function mutateJson(rng: Rng, value: unknown, budget = 1 + int(rng, 4)): unknown {
  if (value === null || typeof value !== 'object') return rng() < 0.3 ? oddValue(rng) : value;
  const container = Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(container);
  for (let i = 0; i < budget; i += 1) {
    const key = keys.length > 0 ? pick(rng, keys) : String(int(rng, 3));
    const op = int(rng, 10);
    const target = container as Record<string, unknown>;
    if (op < 4) target[key] = mutateJson(rng, target[key], 1 + int(rng, 2));
    else if (op < 7) target[key] = oddValue(rng);
    else if (op < 9) delete target[key];
    else target[randomString(rng, 12) || 'k'] = oddValue(rng);
  }
  return container;
}

/** A body: random bytes, a mutated or truncated fixture, a deep nest, empty, or too big. */
function fuzzBody(rng: Rng, fixture: Fixture): Buffer {
  const r = int(rng, 20);
  if (r === 0) return Buffer.alloc(0);
  if (r === 1) return randomBytes(rng, 4096);
  if (r === 2) return Buffer.from(randomString(rng, 2000));
  if (r === 3) return fixture.raw.subarray(0, int(rng, fixture.raw.length));
  if (r === 4) {
    const copy = Buffer.from(fixture.raw);
    for (let i = 0; i < 1 + int(rng, 8); i += 1) copy[int(rng, copy.length)] = int(rng, 256);
    return copy;
  }
  if (r === 5) return Buffer.from(deepNestText(rng, 100 + int(rng, 30_000)));
  if (r === 6) return Buffer.alloc(BODY_LIMIT + 1 + int(rng, 4096), 0x7b);
  if (r === 7) return Buffer.from(pick(rng, ['null', 'true', '0', '""', '[]', '{}', '"\\ud800"', '1e999', '{"a":1,"a":2}']));
  if (r === 8) return Buffer.from(`\ufeff${fixture.raw.toString('utf8')}`);
  if (r <= 10) return fixture.raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fixture.raw.toString('utf8'));
  } catch {
    return Buffer.concat([fixture.raw, randomBytes(rng, 16)]);
  }
  return Buffer.from(JSON.stringify(mutateJson(rng, parsed)));
}

const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'APPLICATION/JSON',
  'application/json; charset=utf-8',
  'application/json;;;; q=',
  'application/jsonp',
  ' application/json ',
  '*/*',
  'application/json\u00e9',
  `application/${'x'.repeat(3000)}`,
];

/** Usually the fixture's type (so the request reaches verification), sometimes an odd one, or none. */
function fuzzContentType(rng: Rng, fixture: Fixture): string | undefined {
  const r = rng();
  if (r < 0.75) return fixture.contentType;
  if (r < 0.8) return undefined;
  return pick(rng, CONTENT_TYPES);
}

/** Extra headers a platform never sends: huge, duplicated, unicode (latin1 on the wire), empty. */
function noiseHeaders(rng: Rng, overSocket: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const n = int(rng, 4);
  for (let i = 0; i < n; i += 1) {
    const r = int(rng, 6);
    // Node's own parser refuses headers over 16 KiB with a 431 before taxsync sees them: keep the
    // socket requests under it, and send the huge ones through inject().
    if (r === 0) out['x-huge'] = 'h'.repeat(overSocket ? 4000 : 20_000 + int(rng, 200_000));
    else if (r === 1) out[`x-fuzz-${i}`] = Array.from({ length: 20 }, () => String.fromCharCode(0x20 + int(rng, 0xdf))).join('').trim();
    else if (r === 2) out['x-shopify-topic'] = pick(rng, ['orders/create', 'refunds/create', 'customers/update', 'app/uninstalled', '', 'orders/create\u00e9']);
    else if (r === 3) out['x-wc-webhook-topic'] = pick(rng, ['order.created', 'order.deleted', 'customer.updated', 'action.woocommerce_x', '']);
    else if (r === 4) out['x-shopify-triggered-at'] = pick(rng, ['2026-11-20T09:58:16Z', 'not a date', '1970-01-01T00:00:00Z', '']);
    else out['x-wc-webhook-delivery-id'] = String(int(rng, 1e6));
  }
  return out;
}

/** Signature headers that are not a valid signature by the configured secret. */
function badSignature(rng: Rng, connector: E2eConnector, raw: Buffer): Record<string, string> {
  const sign = (body: Buffer, secret: string, at: Date) => CONNECTORS[connector]!.sign(body, secret, at);
  const now = new Date();
  const good = sign(raw, E2E_SECRETS[connector], now);
  const [name] = Object.keys(good).filter((h) => /signature|hmac/.test(h));
  switch (int(rng, 9)) {
    case 0:
      return {};
    case 1:
      // A correct signature by another secret (a Standard Webhooks one for the ERP).
      return sign(raw, connector === 'erp' ? 'whsec_d3Jvbmctc2VjcmV0LWZvci1mdXp6' : `${E2E_SECRETS[connector]}-wrong`, now);
    case 2:
      // The signature of other bytes: a tampered body.
      return sign(Buffer.concat([raw, Buffer.from(' ')]), E2E_SECRETS[connector], now);
    case 3:
      // Right secret and bytes, timestamp far outside the tolerance (where one is signed).
      return CONNECTORS[connector]!.signsTimestamp ? sign(raw, E2E_SECRETS[connector], new Date(now.getTime() - 3_600_000)) : {};
    case 4:
      return { ...good, [name!]: randomString(rng, 120) };
    case 5:
      return { ...good, [name!]: Buffer.from(randomBytes(rng, 32)).toString(pick(rng, ['base64', 'hex'] as const)) };
    case 6:
      return { ...good, [name!]: pick(rng, ['', ' ', 'v1,', 't=,v1=', 't=1,v1=zz', 'v1,====', `t=${'9'.repeat(40)},v1=00`, 'sha256=abc']) };
    case 7: {
      // One character of the right signature changed to one that changes the digest (not 'a' → 'A':
      // hex is case-insensitive; and not the last base64 character, whose low bits are padding).
      const value = good[name!]!;
      const at = value.length - 3 - int(rng, 10);
      const swapped = value[at] === '0' ? '1' : '0';
      return { ...good, [name!]: `${value.slice(0, at)}${swapped}${value.slice(at + 1)}` };
    }
    default:
      return { ...good, [name!]: `${'A'.repeat(int(rng, 60_000))}=` };
  }
}

const UNKNOWN_URLS = [
  '/webhooks/paypal',
  '/webhooks/__proto__',
  '/webhooks/constructor',
  '/webhooks/hasOwnProperty',
  '/webhooks/SHOPIFY',
  '/webhooks/shopify/extra',
  '/webhooks/',
  '/webhooks',
  `/webhooks/${'z'.repeat(500)}`,
  '/webhooks/%F0%9F%A7%BE',
  '/webhooks/..%2Fadmin',
  '/webhook/stripe',
];

interface FuzzRequest {
  method: 'POST' | 'GET' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  overSocket: boolean;
}

function routeFor(rng: Rng, connector: E2eConnector): string {
  const base = `/webhooks/${connector}`;
  return rng() < 0.05 ? `${base}?${pick(rng, ['x=1', 'a=%ZZ', `q=${'y'.repeat(1000)}`, '__proto__[x]=1'])}` : base;
}

function unsignedRequest(rng: Rng): FuzzRequest {
  const connector = pick(rng, KNOWN);
  const fixture = pick(rng, FIXTURES[connector]);
  const body = fuzzBody(rng, fixture);
  const overSocket = rng() < 0.1;
  const contentType = fuzzContentType(rng, fixture);
  const unknown = rng() < 0.08;
  return {
    method: rng() < 0.03 ? pick(rng, ['GET', 'PUT', 'DELETE'] as const) : 'POST',
    url: unknown ? pick(rng, UNKNOWN_URLS) : routeFor(rng, connector),
    headers: {
      ...fixture.headers,
      ...noiseHeaders(rng, overSocket),
      ...(contentType === undefined ? {} : { 'content-type': contentType }),
      ...badSignature(rng, connector, body),
    },
    body,
    overSocket,
  };
}

function signedRequest(rng: Rng): FuzzRequest {
  const connector = pick(rng, KNOWN);
  const fixture = pick(rng, FIXTURES[connector]);
  const body = fuzzBody(rng, fixture);
  const overSocket = rng() < 0.1;
  const contentType = rng() < 0.9 ? fixture.contentType : fuzzContentType(rng, fixture);
  return {
    method: 'POST',
    url: rng() < 0.03 ? pick(rng, UNKNOWN_URLS) : routeFor(rng, connector),
    headers: {
      ...fixture.headers,
      ...noiseHeaders(rng, overSocket),
      ...(contentType === undefined ? {} : { 'content-type': contentType }),
      ...CONNECTORS[connector]!.sign(body, E2E_SECRETS[connector], new Date()),
    },
    body,
    overSocket,
  };
}

interface Answer {
  status: number;
  body: string;
}

describe('fuzzed webhook requests', () => {
  const ctx = useRedis();
  let lifecycle: Lifecycle;
  let app: FastifyInstance;
  let address: string;
  let logLines: string[];
  let connection: Redis;
  let queues: Record<QueueName, Queue>;

  beforeEach(async () => {
    logLines = [];
    const config = loadConfig({
      ...e2eEnv(ctx.url, ctx.prefix, 'http://127.0.0.1:9'),
      LOG_LEVEL: 'info',
      TAXSYNC_WEBHOOK_BODY_LIMIT: String(BODY_LIMIT),
    });
    const logger = createLogger({
      level: config.logLevel,
      destination: new Writable({
        write(chunk: Buffer, _e, done) {
          logLines.push(chunk.toString());
          done();
        },
      }),
    });
    lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
    const served = await startServe({ config, settings: DEFAULT_SETTINGS, redisTarget: ctx.url, logger, lifecycle });
    app = served.app;
    address = served.address;
    connection = createRedis(ctx.url, 'producer');
    queues = createQueues(connection, ctx.prefix);
  });

  afterEach(async () => {
    await lifecycle.shutdown('test over');
    await closeQueues(queues);
    connection.disconnect();
  });

  function answeredAsDocumented(request: FuzzRequest, answer: Answer): boolean {
    if (DOCUMENTED.includes(answer.status)) return true;
    const headerBytes = Object.entries(request.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
    return answer.status === 431 && request.overSocket && headerBytes > NODE_HEADER_LIMIT;
  }

  async function send(request: FuzzRequest): Promise<Answer> {
    const hasBody = request.method !== 'GET';
    if (!request.overSocket) {
      const res = await app.inject({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(hasBody ? { payload: request.body } : {}),
      });
      return { status: res.statusCode, body: res.body };
    }
    // fetch() refuses non-latin1 header values and some names; those go as they are through inject().
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([, v]) => /^[\x20-\x7e\x80-\xff]*$/.test(v)));
    const res = await fetch(`${address}${request.url}`, { method: request.method, headers, ...(hasBody ? { body: request.body } : {}) });
    return { status: res.status, body: await res.text() };
  }

  async function run(requests: () => FuzzRequest, count: number, onAnswer: (request: FuzzRequest, answer: Answer) => void) {
    for (let done = 0; done < count; done += PARALLEL) {
      // Inputs are drawn in order before sending, so the sequence does not depend on timing.
      const batch = Array.from({ length: Math.min(PARALLEL, count - done) }, requests);
      const answers = await Promise.all(batch.map(send));
      answers.forEach((answer, i) => onAnswer(batch[i]!, answer));
    }
  }

  function describeRequest(request: FuzzRequest, answer: Answer): string {
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, v.length > 80 ? `${v.slice(0, 80)}…(${v.length})` : v]));
    const body = request.body.length > 200 ? `${request.body.subarray(0, 200).toString('latin1')}…(${request.body.length})` : request.body.toString('latin1');
    return `${request.method} ${request.url.slice(0, 120)} ${JSON.stringify(headers)} body=${JSON.stringify(body)} → ${answer.status} ${answer.body.slice(0, 300)}`;
  }

  function errorLogs(): string[] {
    return logLines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  }

  async function stored() {
    const counts = await Promise.all(
      (['customers', 'transactions', 'vat-submissions'] as const).map((name) =>
        queues[name].getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'),
      ),
    );
    const jobs = counts.flatMap((c) => Object.values(c)).reduce((a, b) => a + b, 0);
    const deadLetters = await createDeadLetterStore(queues['dead-letter']).count();
    return { jobs, deadLetters };
  }

  /** Every key under the test prefix but the queues' meta hashes, which BullMQ writes when a queue opens. */
  async function keysUnderPrefix(): Promise<string[]> {
    const keys: string[] = [];
    for await (const batch of ctx.redis.scanStream({ match: `${ctx.prefix}*`, count: 500 }) as AsyncIterable<string[]>) keys.push(...batch);
    return keys.filter((key) => !/:(customers|transactions|vat-submissions|dead-letter):meta$/.test(key)).sort();
  }

  async function settledHeap(): Promise<number> {
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; i < 3; i += 1) {
      gc?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return process.memoryUsage().heapUsed;
  }

  it(
    'answers unsigned and mis-signed requests with a documented status and writes nothing to Redis',
    async () => {
      const rng = seededRandom(SEED);
      const heapBefore = await settledHeap();
      const undocumented: string[] = [];
      const tally = new Map<number, number>();
      await run(
        () => unsignedRequest(rng),
        PER_TEST,
        (request, answer) => {
          tally.set(answer.status, (tally.get(answer.status) ?? 0) + 1);
          // A 202 here would mean an unsigned request was stored.
          if (!answeredAsDocumented(request, answer) || answer.status === 202 || answer.status === 503) {
            undocumented.push(describeRequest(request, answer));
          }
        },
      );

      expect(undocumented.slice(0, 5), `${undocumented.length} requests with an unexpected status`).toEqual([]);
      expect(tally.get(401) ?? 0, `statuses: ${JSON.stringify([...tally])}`).toBeGreaterThan(PER_TEST / 4);
      expect(await stored()).toEqual({ jobs: 0, deadLetters: 0 });
      expect(await keysUnderPrefix(), 'keys written under the prefix by unsigned requests').toEqual([]);
      expect(errorLogs()).toEqual([]);
      expect((await settledHeap()) - heapBefore).toBeLessThan(200 * 1024 * 1024);
    },
    TIMEOUT_MS,
  );

  it(
    'answers signed garbage with a documented status, dead-letters what it cannot read and stores no more than it answered',
    async () => {
      const rng = seededRandom(SEED + 1);
      const heapBefore = await settledHeap();
      const undocumented: string[] = [];
      const tally = new Map<number, number>();
      let claimedEvents = 0;
      let claimedDeadLetters = 0;
      await run(
        () => signedRequest(rng),
        PER_TEST,
        (request, answer) => {
          tally.set(answer.status, (tally.get(answer.status) ?? 0) + 1);
          // Every signature here is right: a 401 would be verify and sign disagreeing.
          if (!answeredAsDocumented(request, answer) || answer.status === 503 || answer.status === 401) {
            undocumented.push(describeRequest(request, answer));
          }
          if (answer.status === 202) {
            const body = JSON.parse(answer.body) as { accepted: number; dead_lettered: number };
            claimedEvents += body.accepted;
            claimedDeadLetters += body.dead_lettered;
          }
        },
      );

      expect(undocumented.slice(0, 5), `${undocumented.length} requests with an unexpected status`).toEqual([]);
      expect(tally.get(202) ?? 0, `statuses: ${JSON.stringify([...tally])}`).toBeGreaterThan(0);
      expect(claimedDeadLetters).toBeGreaterThan(0);
      const { jobs, deadLetters } = await stored();
      // Coalescing may fold several events of one record into one job, never the other way.
      expect(jobs).toBeLessThanOrEqual(claimedEvents);
      expect(deadLetters).toBe(claimedDeadLetters);
      expect(errorLogs()).toEqual([]);
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).not.toMatch(/outcome="unavailable"/);
      expect((await settledHeap()) - heapBefore).toBeLessThan(200 * 1024 * 1024);
    },
    TIMEOUT_MS,
  );
});
