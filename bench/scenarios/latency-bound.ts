import type { BenchContext } from '../run.js';
import { startBaselineQueue, startBaselineWorker, startFloorWorker } from '../lib/baseline.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import type { Config } from '../../src/config/index.js';
import { benchConfig, invoiceEvent, startProducer, startTaxsyncWorkers } from '../lib/taxsync.js';

/** Calls/s between the 10% and the 90% mark of `n` PUTs (leaves out the start and the tail). */
async function steadyRate(ctx: BenchContext, n: number, deadlineMs: number): Promise<number> {
  await ctx.api.waitForPuts(Math.floor(n * 0.1), deadlineMs);
  const t1 = performance.now();
  const p1 = ctx.api.puts;
  await ctx.api.waitForPuts(Math.floor(n * 0.9), deadlineMs);
  const rate = ((ctx.api.puts - p1) / (performance.now() - t1)) * 1000;
  await ctx.api.waitForPuts(n, deadlineMs);
  return rate;
}

/**
 * Scenario 3: the API answers after 100 ms. taxsync's workers at their default concurrency
 * against the ideal (concurrency ÷ latency); the bare BullMQ worker at the same concurrency is
 * shown for reference. Target: ≥ 90% of the ideal, and ≥ 500 calls/s for one worker process.
 * Row 3c is scenario 2's floor worker under the same latency: what row 3 can reach while keeping
 * the invariants.
 */
export async function latencyBound(ctx: BenchContext): Promise<ScenarioResult[]> {
  const latencyMs = envInt('BENCH_LATENCY_MS', 100);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const prefix = ctx.prefix('latency');
  const config = benchConfig(ctx.redis.url, prefix, ctx.api.url);
  const concurrency = config.queue.concurrency.transactions;
  // Enough calls for about 10 s at the ideal rate.
  const n = envInt('BENCH_LATENCY_EVENTS', Math.max(2_000, Math.round((concurrency / latencyMs) * 1000 * 10)));
  const ideal = (concurrency / latencyMs) * 1000;

  // taxsync's queue and latest-state store holding `n` waiting invoices, the API answering late.
  const filled = async (config: Config) => {
    const producer = await startProducer(config, ctx.redis.url);
    await producer.acceptAll(Array.from({ length: n }, (_, i) => invoiceEvent(`lat-${i}`, 1)));
    ctx.api.reset();
    ctx.api.delayMs = latencyMs;
    return producer;
  };

  const producer = await filled(config);
  const workers = await startTaxsyncWorkers(config, ctx.redis.url, ctx.api.url);
  const taxsyncRate = await steadyRate(ctx, n, deadlineMs);
  await workers.stop();
  await producer.close();
  const sample = ctx.api.byRecord.get('lat-0')?.lastBody ?? '{}';
  const bodyOf = (id: string) => sample.replace('"external_id":"lat-0"', `"external_id":"${id}"`);
  await ctx.redis.clear(prefix);

  // The floor (row 3c): scenario 2's floor worker (taxsync's record store around each prepared PUT)
  // at the same latency and concurrency, on taxsync's queue filled the same way.
  const floorPrefix = ctx.prefix('latency-floor');
  const floorConfig = benchConfig(ctx.redis.url, floorPrefix, ctx.api.url);
  const floorProducer = await filled(floorConfig);
  const floorWorker = await startFloorWorker(ctx.redis.url, floorPrefix, ctx.api.url, concurrency, bodyOf, floorConfig.trace);
  const floorRate = await steadyRate(ctx, n, deadlineMs);
  await floorWorker.close();
  await floorProducer.close();
  await ctx.redis.clear(floorPrefix);

  const basePrefix = ctx.prefix('latency-base');
  const queue = await startBaselineQueue(ctx.redis.url, basePrefix, 'bench-latency');
  await queue.addAll(Array.from({ length: n }, (_, i) => bodyOf(`lat-${i}`)));
  ctx.api.reset();
  ctx.api.delayMs = latencyMs;
  const worker = await startBaselineWorker(ctx.redis.url, basePrefix, 'bench-latency', ctx.api.url, concurrency);
  const baselineRate = await steadyRate(ctx, n, deadlineMs);
  await worker.close();
  await queue.close();
  ctx.api.reset();
  await ctx.redis.clear(basePrefix);

  const ratio = taxsyncRate / ideal;
  return [
    {
      id: '3',
      name: 'latency-bound (100 ms API)',
      metric: 'calls/s',
      taxsync: taxsyncRate,
      baseline: ideal,
      ratio,
      ratioMeaning: 'taxsync calls/s ÷ (concurrency ÷ latency)',
      target: '≥ 0.9 of ideal, ≥ 500/s',
      pass: ratio >= 0.9 && taxsyncRate >= 500,
      details: { events: n, latencyMs, concurrency, idealCallsPerS: ideal, bareWorkerCallsPerS: round(baselineRate), bareWorkerOfIdeal: round(baselineRate / ideal, 3) },
    },
    {
      id: '3c',
      name: 'latency-bound floor',
      metric: 'calls/s',
      taxsync: floorRate,
      baseline: ideal,
      ratio: floorRate / ideal,
      ratioMeaning: "scenario 2's floor worker (the bare worker plus taxsync's record store around each prepared PUT) calls/s ÷ (concurrency ÷ latency): the most row 3 can reach while keeping the invariants",
      target: 'floor of row 3',
      pass: true,
      details: { taxsyncOfFloor: round(taxsyncRate / floorRate, 3) },
    },
  ];
}
