import { freePort } from '../../src/runtime/redis-probe.js';
import type { BenchContext } from '../run.js';
import { answers, bare, CLI, startNode, type NodeChild } from '../lib/child.js';
import { percentile, postSteady, type Request } from '../lib/load.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { SHOPIFY_SECRET, signedShopifyOrder } from '../lib/shopify-order.js';
import { taxsyncChildEnv } from '../lib/taxsync.js';

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  measured: number;
  statuses: Record<number, number>;
}

/**
 * Sends `requests` at `rate`/s and returns, per order, the time from its 202 to the first PUT of
 * its transaction at the API. The first second is warm-up and is left out.
 */
async function measure(ctx: BenchContext, url: string, requests: readonly Request[], orderIds: readonly string[], rate: number, deadlineMs: number, stop: () => Promise<void>): Promise<Latencies> {
  ctx.api.reset();
  const acceptedAt = new Map<number, number>();
  try {
    const load = await postSteady(url, '/webhooks/shopify', requests, rate, (i, at) => acceptedAt.set(i, at));
    await ctx.api.waitForPuts(acceptedAt.size, deadlineMs);
    const latencies: number[] = [];
    for (const [i, at] of acceptedAt) {
      if (i < rate) continue;
      const put = ctx.api.byRecord.get(orderIds[i]!);
      // A PUT may arrive before the load generator has read the 202: that is 0 ms.
      if (put) latencies.push(Math.max(0, put.firstAt - at));
    }
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      measured: latencies.length,
      statuses: Object.fromEntries(load.statuses),
    };
  } finally {
    await stop();
  }
}

/**
 * Scenario 5: a steady 500 webhooks/s into `taxsync start` (serve + workers in one process),
 * p50/p99 from the 202 to the API receiving the call; the baseline is the bare server + bare
 * worker (two processes) doing one Queue.add and one PUT. Target: p99 ≤ 50 ms.
 */
export async function e2eLatency(ctx: BenchContext): Promise<ScenarioResult[]> {
  const rate = envInt('BENCH_E2E_RATE', 500);
  const seconds = envInt('BENCH_E2E_SECONDS', 20);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const n = rate * seconds;
  const orders = Array.from({ length: n }, (_, i) => signedShopifyOrder(100_000 + i));
  const orderIds = orders.map((o) => String((JSON.parse(o.body) as { id: number }).id));

  const prefix = ctx.prefix('e2e');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: NodeChild = await startNode(
    CLI,
    ['start'],
    { ...taxsyncChildEnv(ctx, prefix), TAXSYNC_HTTP_PORT: String(port), SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET },
    answers(`${url}/healthz`),
    'e2e-taxsync',
  );
  const taxsync = await measure(ctx, url, orders, orderIds, rate, deadlineMs, () => child.stop());

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
  const baseline = await measure(ctx, baseUrl, orders, orderIds, rate, deadlineMs, async () => {
    await server.stop();
    await worker.stop();
  });

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
        taxsync: { ...taxsync, p50: round(taxsync.p50), p99: round(taxsync.p99), max: round(taxsync.max) },
        baseline: { ...baseline, p50: round(baseline.p50), p99: round(baseline.p99), max: round(baseline.max) },
      },
    },
  ];
}
