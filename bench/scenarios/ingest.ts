import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { freePort } from '../../src/daemon/redis-probe.js';
import type { BenchContext } from '../run.js';
import { answers, bare, CLI, startNode, type NodeChild } from '../lib/child.js';
import { postAll, type LoadResult, type Request } from '../lib/load.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { SHOPIFY_SECRET, signedShopifyOrder } from '../lib/shopify-order.js';
import { taxsyncChildEnv } from '../lib/taxsync.js';

/** Waiting jobs of `queue` under `prefix`. */
async function waiting(redisUrl: string, prefix: string, queue: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const q = new Queue(queue, { connection, prefix });
  const n = await q.getWaitingCount();
  await q.close();
  connection.disconnect();
  return n;
}

async function run(child: NodeChild, url: string, requests: readonly Request[], warmup: readonly Request[], connections: number): Promise<LoadResult & { cpuMs: number }> {
  try {
    await postAll(url, '/webhooks/shopify', warmup, connections);
    const cpu = child.cpuMs();
    const result = await postAll(url, '/webhooks/shopify', requests, connections);
    return { ...result, cpuMs: child.cpuMs() - cpu };
  } finally {
    await child.stop();
  }
}

const rps = (r: LoadResult, n: number) => (n / r.elapsedMs) * 1000;
const accepted = (r: LoadResult) => r.statuses.get(202) ?? 0;

/**
 * Scenario 1: signed Shopify orders/create webhooks (~2 KB) over ~50 connections to `taxsync
 * serve` (a process of its own, no workers), against a bare node:http server that verifies the
 * same HMAC and does one Queue.add per request. Afterwards every accepted event must be in Redis.
 */
export async function ingest(ctx: BenchContext): Promise<ScenarioResult[]> {
  const n = envInt('BENCH_INGEST_REQUESTS', 10_000);
  const connections = envInt('BENCH_INGEST_CONNECTIONS', 50);
  const warmupN = Math.min(1_000, Math.ceil(n / 10));
  const make = (from: number, count: number) => Array.from({ length: count }, (_, i) => signedShopifyOrder(from + i));

  // taxsync serve, with the durable acknowledgement (TAXSYNC_ACK_DURABILITY=aof, the default:
  // WAITAOF, or on Redis < 7.2 an INFO persistence check after each write) and without it (none).
  // Two rounds in opposite orders (aof then none, none then aof), half the requests each: on a
  // shared machine whichever side ran second came out slower, whatever it was.
  const serve = async (durability: 'aof' | 'none', from: number, count: number) => {
    const prefix = ctx.prefix(`ingest-${durability}-${from}`);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...taxsyncChildEnv(ctx, prefix), TAXSYNC_HTTP_PORT: String(port), SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET, TAXSYNC_ACK_DURABILITY: durability };
    const child = await startNode(CLI, ['serve'], env, answers(`${url}/healthz`), `ingest-taxsync-${durability}`);
    const warm = Math.ceil(warmupN / 2);
    const result = await run(child, url, make(from, count), make(n + from, warm), connections);
    return { result, stored: await waiting(ctx.redis.url, prefix, 'transactions'), warm };
  };
  const half = Math.ceil(n / 2);
  const rounds = { aof: [] as Awaited<ReturnType<typeof serve>>[], none: [] as Awaited<ReturnType<typeof serve>>[] };
  rounds.aof.push(await serve('aof', 0, half));
  rounds.none.push(await serve('none', 0, half));
  rounds.none.push(await serve('none', half, n - half));
  rounds.aof.push(await serve('aof', half, n - half));
  const combine = (parts: Awaited<ReturnType<typeof serve>>[]) => {
    const statuses = new Map<number, number>();
    for (const part of parts) for (const [status, count] of part.result.statuses) statuses.set(status, (statuses.get(status) ?? 0) + count);
    return {
      result: { statuses, elapsedMs: parts.reduce((t, p) => t + p.result.elapsedMs, 0), cpuMs: parts.reduce((t, p) => t + p.result.cpuMs, 0) },
      stored: parts.reduce((t, p) => t + p.stored, 0),
      warm: parts.reduce((t, p) => t + p.warm, 0),
    };
  };
  const durable = combine(rounds.aof);
  const fast = combine(rounds.none);
  const requests = make(0, n);
  const taxsync = durable.result;
  const taxsyncStored = durable.stored;

  // bare server
  const basePrefix = ctx.prefix('ingest-base');
  const basePort = await freePort();
  const baseUrl = `http://127.0.0.1:${basePort}`;
  const baseRequests = make(0, n);
  const baseChild = await startNode(
    bare('ingest-server'),
    [],
    { REDIS_URL: ctx.redis.url, BENCH_PREFIX: basePrefix, BENCH_QUEUE: 'orders', BENCH_SECRET: SHOPIFY_SECRET, BENCH_PORT: String(basePort) },
    answers(baseUrl),
    'ingest-baseline',
  );
  const baseline = await run(baseChild, baseUrl, baseRequests, make(n, warmupN), connections);
  const baselineStored = await waiting(ctx.redis.url, basePrefix, 'orders');

  // The floors (bench/bare/ingest-floor.ts): the bare server plus only the steps the invariants
  // need, with taxsync's own code for them: the state steps alone (1c), then with the order read
  // at the door too (1d). What row 1 spends above 1d is taxsync's own overhead.
  const floor = async (steps: string, label: string) => {
    const prefix = ctx.prefix(`ingest-floor-${label}`);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = await startNode(
      bare('ingest-floor'),
      [],
      { REDIS_URL: ctx.redis.url, BENCH_PREFIX: prefix, BENCH_SECRET: SHOPIFY_SECRET, BENCH_PORT: String(port), BENCH_FLOOR_STEPS: steps, TAXSYNC_ACK_DURABILITY: 'aof' },
      answers(url),
      `ingest-floor-${label}`,
    );
    const result = await run(child, url, make(0, n), make(n, warmupN), connections);
    return { result, stored: await waiting(ctx.redis.url, prefix, 'transactions') };
  };
  const floorState = await floor('store', 'state');
  const floorParse = await floor('parse,store', 'parse');
  const floorRead = await floor('read,store', 'read');

  const taxsyncRate = rps(taxsync, n);
  const noneRate = rps(fast.result, n);
  const baselineRate = rps(baseline, n);
  // Every 202 must have its event stored (warm-up requests included: they were accepted too).
  const allStored = accepted(taxsync) === n && taxsyncStored === n + durable.warm && baselineStored === n + warmupN;
  return [
    {
      id: '1',
      name: 'ingest',
      metric: 'webhooks/s',
      taxsync: taxsyncRate,
      baseline: baselineRate,
      ratio: taxsyncRate / baselineRate,
      ratioMeaning: 'taxsync webhooks/s ÷ bare server webhooks/s',
      target: '≥ 0.7, all stored',
      pass: taxsyncRate / baselineRate >= 0.7 && allStored,
      details: {
        requests: n,
        warmup: warmupN,
        connections,
        bodyBytes: requests[0]!.body.length,
        taxsyncMs: round(taxsync.elapsedMs),
        baselineMs: round(baseline.elapsedMs),
        // CPU per request of the server process: steadier than wall time on a busy machine.
        taxsyncCpuUsPerRequest: round((taxsync.cpuMs * 1000) / n),
        baselineCpuUsPerRequest: round((baseline.cpuMs * 1000) / n),
        taxsyncStatuses: Object.fromEntries(taxsync.statuses),
        baselineStatuses: Object.fromEntries(baseline.statuses),
        taxsyncStoredInvoices: taxsyncStored,
        baselineStoredJobs: baselineStored,
        redis: ctx.redis.version,
        ackDurability: 'aof',
        // The cost of the durable acknowledgement: the same run with TAXSYNC_ACK_DURABILITY=none.
        ackNoneWebhooksPerSecond: round(noneRate),
        ackCostRatio: round(taxsyncRate / noneRate, 3),
      },
    },
    ...[
      { id: '1c', name: 'ingest floor: bare + state steps', floor: floorState, meaning: "the bare server plus the dedupe check and taxsync's producer (latest-state write, one job per record, delivery marker, one MULTI, durable acknowledgement), storing an event prepared at start" },
      { id: '1e', name: 'ingest floor: + JSON.parse only', floor: floorParse, meaning: '1c plus the least any reading of the order costs (JSON.parse, the order\'s id and time; no validation, no mapping): what no choice of validator or mapping can beat' },
      { id: '1d', name: 'ingest floor: + reading the order', floor: floorRead, meaning: "1c plus reading the order at the door with taxsync's Shopify connector (JSON.parse, the order's schema, the mapping with exact decimals, the event's check): the most row 1 can reach while keeping the invariants" },
    ].map(
      ({ id, name, floor: f, meaning }): ScenarioResult => ({
        id,
        name,
        metric: 'webhooks/s',
        taxsync: rps(f.result, n),
        baseline: baselineRate,
        ratio: rps(f.result, n) / baselineRate,
        ratioMeaning: `${meaning} ÷ the bare server`,
        target: 'floor of row 1',
        pass: accepted(f.result) === n && f.stored === n + warmupN,
        details: { cpuUsPerRequest: round((f.result.cpuMs * 1000) / n), statuses: Object.fromEntries(f.result.statuses), stored: f.stored, taxsyncOfFloor: round(taxsyncRate / rps(f.result, n), 3) },
      }),
    ),
    {
      id: '1b',
      name: 'ingest, TAXSYNC_ACK_DURABILITY=none',
      metric: 'webhooks/s',
      taxsync: noneRate,
      baseline: baselineRate,
      ratio: noneRate / baselineRate,
      ratioMeaning: 'taxsync (acks not confirmed on disk) webhooks/s ÷ bare server webhooks/s; compare with row 1 for the cost of TAXSYNC_ACK_DURABILITY=aof',
      target: 'for comparison',
      pass: accepted(fast.result) === n && fast.stored === n + fast.warm,
      details: {
        redis: ctx.redis.version,
        taxsyncMs: round(fast.result.elapsedMs),
        taxsyncCpuUsPerRequest: round((fast.result.cpuMs * 1000) / n),
        taxsyncStatuses: Object.fromEntries(fast.result.statuses),
        taxsyncStoredInvoices: fast.stored,
      },
    },
  ];
}
