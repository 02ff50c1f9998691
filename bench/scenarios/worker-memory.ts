import type { BenchContext } from '../run.js';
import { startBaselineQueue } from '../lib/baseline.js';
import { bare, CLI, startNode, type NodeChild } from '../lib/child.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { benchConfig, invoiceEvent, startProducer, taxsyncChildEnv } from '../lib/taxsync.js';

interface RssTrace {
  peak: number;
  /** RSS when 10% of the backlog was sent. */
  atTenth: number;
  /** Highest RSS after the 10% mark. */
  peakAfterTenth: number;
  end: number;
  samples: number;
  /** RSS (MB) at each tenth of the backlog sent: 10%, 20%, … 100%. */
  byTenth: number[];
}

const mb = (bytes: number) => round(bytes / 2 ** 20, 1);

/** Samples the child's RSS every 200 ms until the API has seen `n` PUTs. */
async function drain(ctx: BenchContext, child: NodeChild, n: number, deadlineMs: number): Promise<RssTrace> {
  const until = Date.now() + deadlineMs;
  const trace: RssTrace = { peak: 0, atTenth: 0, peakAfterTenth: 0, end: 0, samples: 0, byTenth: [] };
  try {
    for (;;) {
      const rss = child.rss();
      const done = ctx.api.puts;
      trace.samples += 1;
      trace.peak = Math.max(trace.peak, rss);
      if (done >= n / 10) {
        if (trace.atTenth === 0) trace.atTenth = rss;
        trace.peakAfterTenth = Math.max(trace.peakAfterTenth, rss);
      }
      trace.end = rss;
      while (trace.byTenth.length < 10 && done >= ((trace.byTenth.length + 1) * n) / 10) trace.byTenth.push(mb(rss));
      if (done >= n) return trace;
      if (Date.now() > until) throw new Error(`the API saw ${done} of ${n} PUTs before the deadline`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await child.stop();
  }
}

/**
 * Scenario 6b: `taxsync work` (a process of its own) drains a backlog of 100,000 invoice events;
 * its RSS is sampled throughout. Target: ≤ 250 MB, and flat after the first 10% (the median RSS
 * of the last half of the drain at most 10% above the median from 10% to 50%). The bare worker
 * draining the same number of prepared jobs is shown for reference.
 */
export async function workerMemory(ctx: BenchContext): Promise<ScenarioResult[]> {
  const n = envInt('BENCH_MEMORY_EVENTS', 100_000);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);

  const prefix = ctx.prefix('memory');
  const config = benchConfig(ctx.redis.url, prefix, ctx.api.url);
  const producer = await startProducer(config, ctx.redis.url);
  await producer.acceptAll(Array.from({ length: n }, (_, i) => invoiceEvent(`mem-${i}`, 1)));
  await producer.close();
  ctx.api.reset();
  const child = await startNode(CLI, ['work', '--queue', 'transactions'], taxsyncChildEnv(ctx, prefix), () => Promise.resolve(true), 'memory-taxsync');
  const taxsync = await drain(ctx, child, n, deadlineMs);
  const sample = ctx.api.byRecord.get('mem-0')?.lastBody ?? '{}';
  await ctx.redis.clear(prefix);

  const basePrefix = ctx.prefix('memory-base');
  const queue = await startBaselineQueue(ctx.redis.url, basePrefix, 'bench-memory');
  await queue.addAll(Array.from({ length: n }, (_, i) => sample.replace('"external_id":"mem-0"', `"external_id":"mem-${i}"`)));
  await queue.close();
  ctx.api.reset();
  const worker = await startNode(
    bare('worker'),
    [],
    {
      REDIS_URL: ctx.redis.url,
      BENCH_PREFIX: basePrefix,
      BENCH_QUEUE: 'bench-memory',
      BENCH_API_URL: ctx.api.url,
      BENCH_CONCURRENCY: String(config.queue.concurrency.transactions),
    },
    () => Promise.resolve(true),
    'memory-baseline',
  );
  const baseline = await drain(ctx, worker, n, deadlineMs);
  ctx.api.reset();
  await ctx.redis.clear(basePrefix);

  // "Flat": RSS moves in a garbage-collection sawtooth, so the trend is the median of the last
  // half of the drain against the median from 10% to 50%.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const trend = median(taxsync.byTenth.slice(5)) / median(taxsync.byTenth.slice(0, 5));
  return [
    {
      id: '6b',
      name: 'worker RSS draining 100k',
      metric: 'MB (peak)',
      taxsync: mb(taxsync.peak),
      baseline: mb(baseline.peak),
      ratio: taxsync.peak / baseline.peak,
      ratioMeaning: 'taxsync peak RSS ÷ bare worker peak RSS',
      target: '≤ 250 MB, flat after 10%',
      pass: taxsync.peak <= 250 * 2 ** 20 && trend <= 1.1,
      details: {
        events: n,
        taxsyncMB: { peak: mb(taxsync.peak), atTenth: mb(taxsync.atTenth), peakAfterTenth: mb(taxsync.peakAfterTenth), end: mb(taxsync.end), samples: taxsync.samples, byTenth: taxsync.byTenth },
        trendAfterTenth: round(trend, 3),
        baselineMB: { peak: mb(baseline.peak), atTenth: mb(baseline.atTenth), end: mb(baseline.end), byTenth: baseline.byTenth },
      },
    },
  ];
}
