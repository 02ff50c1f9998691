import { freePort } from '../../src/daemon/redis-probe.js';
import type { BenchContext } from '../run.js';
import { answers, bare, CLI, startNode, type NodeChild } from '../lib/child.js';
import { percentile, postSteady, type Request } from '../lib/load.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { SHOPIFY_SECRET, signedShopifyOrder } from '../lib/shopify-order.js';
import { taxsyncChildEnv } from '../lib/taxsync.js';

interface Latencies {
  p50: number;
  p90: number;
  p99: number;
  /** Calls over 50 ms, by second of the run (where the tail comes from). */
  slowBySecond: Record<number, number>;
  max: number;
  measured: number;
  statuses: Record<number, number>;
  /** PUT /v1/customers/ calls the API saw (an order's customer facts go before its transaction). */
  customerPuts: number;
  /** CPU (user + system) per order of the server and of the worker, over the whole load, in µs. */
  cpuUsPerOrder: { server: number; worker: number };
}

/** The two processes under test: the one taking webhooks and the one calling the API. */
interface Pair {
  server: NodeChild;
  worker: NodeChild;
}

/**
 * Sends `requests` at `rate`/s and returns, per order, the time from its 202 to the first PUT of
 * its transaction at the API. The first `warmupS` seconds (JIT, connections, first token) are left out.
 */
async function measure(
  ctx: BenchContext,
  url: string,
  requests: readonly Request[],
  orderIds: readonly string[],
  rate: number,
  warmupS: number,
  deadlineMs: number,
  pair: Pair,
): Promise<Latencies> {
  ctx.api.reset();
  const acceptedAt = new Map<number, number>();
  try {
    const cpuBefore = { server: pair.server.cpuMs(), worker: pair.worker.cpuMs() };
    const load = await postSteady(url, '/webhooks/shopify', requests, rate, (i, at) => acceptedAt.set(i, at));
    await ctx.api.waitForPuts(acceptedAt.size, deadlineMs);
    const cpuUs = (child: NodeChild, before: number) => Math.round(((child.cpuMs() - before) * 1000) / requests.length);
    const cpuUsPerOrder = { server: cpuUs(pair.server, cpuBefore.server), worker: cpuUs(pair.worker, cpuBefore.worker) };
    const latencies: number[] = [];
    const slowBySecond: Record<number, number> = {};
    for (const [i, at] of acceptedAt) {
      if (i < rate * warmupS) continue;
      const put = ctx.api.byRecord.get(orderIds[i]!);
      if (!put) continue;
      // A PUT may arrive before the load generator has read the 202: that is 0 ms.
      const latency = Math.max(0, put.firstAt - at);
      latencies.push(latency);
      const second = Math.floor(i / rate);
      if (latency > 50) slowBySecond[second] = (slowBySecond[second] ?? 0) + 1;
    }
    return {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      slowBySecond,
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      measured: latencies.length,
      statuses: Object.fromEntries(load.statuses),
      customerPuts: ctx.api.customerPuts,
      cpuUsPerOrder,
    };
  } finally {
    await pair.server.stop();
    await pair.worker.stop();
  }
}

/**
 * Scenario 5: a steady 500 Shopify order webhooks/s into `taxsync serve` + `taxsync work` (two
 * processes), p50/p99 from the 202 to the API receiving the order's transaction; the baseline is
 * the bare server + bare worker (two processes) doing one Queue.add and one PUT. The first
 * BENCH_E2E_WARMUP_S (5) seconds are warm-up; BENCH_E2E_SECONDS (20) are measured. Target: p99 ≤ 50 ms.
 * Row 5b runs the same load through the floors as a pair (bench/bare/ingest-floor.ts with the order
 * read, bench/bare/floor-worker.ts): the least row 5 can reach while keeping the invariants.
 */
export async function e2eLatency(ctx: BenchContext): Promise<ScenarioResult[]> {
  const rate = envInt('BENCH_E2E_RATE', 500);
  const seconds = envInt('BENCH_E2E_SECONDS', 20);
  const warmupS = envInt('BENCH_E2E_WARMUP_S', 5);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const n = rate * (warmupS + seconds);
  const orders = Array.from({ length: n }, (_, i) => signedShopifyOrder(100_000 + i));
  const orderIds = orders.map((o) => String((JSON.parse(o.body) as { id: number }).id));

  const prefix = ctx.prefix('e2e');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // `taxsync serve` and `taxsync work` as two processes, as the baseline's server and worker are.
  const env = { ...taxsyncChildEnv(ctx, prefix), TAXSYNC_HTTP_PORT: String(port), SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET };
  const serve: NodeChild = await startNode(CLI, ['serve'], env, answers(`${url}/healthz`), 'e2e-taxsync-serve');
  const work: NodeChild = await startNode(CLI, ['work'], env, () => Promise.resolve(true), 'e2e-taxsync-work');
  // The workers connect and fetch a token before the first webhook is timed.
  await new Promise((r) => setTimeout(r, 1_000));
  const taxsync = await measure(ctx, url, orders, orderIds, rate, warmupS, deadlineMs, { server: serve, worker: work });

  const basePrefix = ctx.prefix('e2e-base');
  const basePort = await freePort();
  const baseUrl = `http://127.0.0.1:${basePort}`;
  const common = { REDIS_URL: ctx.redis.url, BENCH_PREFIX: basePrefix, BENCH_QUEUE: 'orders' };
  const server = await startNode(bare('ingest-server'), [], { ...common, BENCH_SECRET: SHOPIFY_SECRET, BENCH_PORT: String(basePort) }, answers(baseUrl), 'e2e-baseline-server');
  const worker = await startNode(
    bare('worker'),
    [],
    { ...common, BENCH_API_URL: ctx.api.url, BENCH_CONCURRENCY: '100', BENCH_FROM_ORDER: '1' },
    () => Promise.resolve(true),
    'e2e-baseline-worker',
  );
  const baseline = await measure(ctx, baseUrl, orders, orderIds, rate, warmupS, deadlineMs, { server, worker });

  // The floor (row 5b): the ingest floor 1d (the bare server plus reading the order and the state
  // steps, with taxsync's own code) and the sync floor with the order's two calls
  // (bench/bare/floor-worker.ts), as two processes: what row 5 can reach while keeping the invariants.
  const floorPrefix = ctx.prefix('e2e-floor');
  const floorPort = await freePort();
  const floorUrl = `http://127.0.0.1:${floorPort}`;
  const floorServer = await startNode(
    bare('ingest-floor'),
    [],
    { REDIS_URL: ctx.redis.url, BENCH_PREFIX: floorPrefix, BENCH_SECRET: SHOPIFY_SECRET, BENCH_PORT: String(floorPort), BENCH_FLOOR_STEPS: 'read,store', TAXSYNC_ACK_DURABILITY: 'aof' },
    answers(floorUrl),
    'e2e-floor-server',
  );
  const floorWorker = await startNode(
    bare('floor-worker'),
    [],
    { REDIS_URL: ctx.redis.url, BENCH_PREFIX: floorPrefix, BENCH_API_URL: ctx.api.url, BENCH_CONCURRENCY: '100' },
    () => Promise.resolve(true),
    'e2e-floor-worker',
  );
  const floor = await measure(ctx, floorUrl, orders, orderIds, rate, warmupS, deadlineMs, { server: floorServer, worker: floorWorker });

  const details = (l: Latencies) => ({ ...l, p50: round(l.p50), p90: round(l.p90), p99: round(l.p99), max: round(l.max) });
  return [
    {
      id: '5',
      name: 'e2e latency p99 @ 500/s',
      metric: 'ms',
      taxsync: taxsync.p99,
      baseline: baseline.p99,
      ratio: taxsync.p99 / baseline.p99,
      ratioMeaning: 'taxsync p99 ÷ bare p99 (lower is better)',
      target: 'p99 ≤ 50 ms',
      pass: taxsync.p99 <= 50,
      details: {
        rate,
        seconds,
        warmupS,
        taxsync: details(taxsync),
        baseline: details(baseline),
      },
    },
    {
      id: '5b',
      name: 'e2e floor: floor server + floor worker',
      metric: 'ms',
      taxsync: floor.p99,
      baseline: baseline.p99,
      ratio: floor.p99 / baseline.p99,
      ratioMeaning:
        "p99 of the floors as a pair (1d's server: the order read and the state steps; 2c's worker with the order's two calls, the customer's facts first, and the read doing SENDING's work) ÷ bare p99: what row 5 can reach while keeping the invariants",
      target: 'floor of row 5',
      pass: true,
      details: { floor: details(floor) },
    },
  ];
}
