import type { BenchContext } from '../run.js';
import { startBaselineQueue, startBaselineWorker } from '../lib/baseline.js';
import type { FakeApi } from '../lib/fake-api.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { benchConfig, invoiceEvent, startProducer, startTaxsyncWorkers } from '../lib/taxsync.js';

interface Outcome {
  calls: number;
  maxPerRecord: number;
  /** Records whose newest PUT carries the last update's unit price. */
  finalCorrect: number;
}

function outcome(api: FakeApi, versions: number): Outcome {
  let maxPerRecord = 0;
  let finalCorrect = 0;
  for (const { count, lastBody } of api.byRecord.values()) {
    maxPerRecord = Math.max(maxPerRecord, count);
    const body = JSON.parse(lastBody) as { items?: { unit_price?: string }[] };
    // The first line's unit price is `<version>.10` (see invoiceEvent).
    if (body.items?.[0]?.unit_price === `${versions}.1`) finalCorrect += 1;
  }
  return { calls: api.puts, maxPerRecord, finalCorrect };
}

async function settle(check: () => Promise<boolean>, quietMs: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  let quietSince: number | undefined;
  for (;;) {
    if (await check()) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= quietMs) return;
    } else quietSince = undefined;
    if (Date.now() > until) throw new Error('the queue did not settle before the deadline');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Scenario 4: U updates over R records in one burst, workers running. taxsync must make ≤ 2 API
 * calls per record and end on the last update; the bare worker makes one call per update.
 */
export async function coalescing(ctx: BenchContext): Promise<ScenarioResult[]> {
  const recordCount = envInt('BENCH_COALESCE_RECORDS', 100);
  const updates = envInt('BENCH_COALESCE_UPDATES', 10_000);
  const versions = Math.ceil(updates / recordCount);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const { api, redis } = ctx;
  // Version-major order: each record's updates are spread over the whole burst.
  const order: { record: number; version: number }[] = [];
  for (let version = 1; version <= versions; version++) for (let record = 0; record < recordCount; record++) order.push({ record, version });

  const prefix = ctx.prefix('coalesce');
  const config = benchConfig(redis.url, prefix, api.url);
  // taxsync's default (or TAXSYNC_CONCURRENCY_TRANSACTIONS); the baseline worker gets the same.
  const concurrency = config.queue.concurrency.transactions;
  const producer = await startProducer(config, redis.url);
  api.reset();
  const workers = await startTaxsyncWorkers(config, redis.url, api.url);
  const events = order.map(({ record, version }) => invoiceEvent(`co-${record}`, version));
  const started = performance.now();
  await producer.acceptAll(events, 100, 8);
  await settle(() => producer.idle(), 500, deadlineMs);
  const taxsyncMs = performance.now() - started - 500;
  const taxsync = outcome(api, versions);
  await workers.stop();
  await producer.close();
  await redis.clear(prefix);

  // Baseline: one job per update, each a prepared PUT of that update's body.
  const basePrefix = ctx.prefix('coalesce-base');
  const template = api.byRecord.get('co-0')?.lastBody;
  if (!template) throw new Error('taxsync sent no PUT for co-0');
  const bodies = order.map(({ record, version }) =>
    template.replace('"external_id":"co-0"', `"external_id":"co-${record}"`).replace(/"unit_price":"[^"]*"/, `"unit_price":"${version}.1"`),
  );
  api.reset();
  const queue = await startBaselineQueue(redis.url, basePrefix, 'bench-coalesce');
  const worker = await startBaselineWorker(redis.url, basePrefix, 'bench-coalesce', api.url, concurrency);
  const baseStarted = performance.now();
  await queue.addAll(bodies, 100);
  await api.waitForPuts(bodies.length, deadlineMs);
  const baselineMs = performance.now() - baseStarted;
  const baseline = outcome(api, versions);
  await worker.close();
  await queue.close();
  await redis.clear(basePrefix);

  const perRecord = taxsync.calls / recordCount;
  const pass = taxsync.maxPerRecord <= 2 && taxsync.finalCorrect === recordCount;
  return [
    {
      id: '4',
      name: 'coalescing',
      metric: 'API calls/record',
      taxsync: perRecord,
      baseline: baseline.calls / recordCount,
      ratio: perRecord / (baseline.calls / recordCount),
      ratioMeaning: 'taxsync calls ÷ baseline calls (lower is better)',
      target: '≤ 2/record, final = last',
      pass,
      details: {
        records: recordCount,
        updates: events.length,
        taxsync: { ...taxsync, ms: round(taxsyncMs) },
        baseline: { ...baseline, ms: round(baselineMs) },
      },
    },
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run of 4b: every record gets `updates` sequential updates at `rate`/s, records side by side. */
async function sequentialRun(ctx: BenchContext, windowMs: number, records: number, updates: number, rate: number, deadlineMs: number) {
  const { api, redis } = ctx;
  const prefix = ctx.prefix(`burst-${windowMs}`);
  const config = benchConfig(redis.url, prefix, api.url, { TAXSYNC_COALESCE_MS: String(windowMs) });
  const producer = await startProducer(config, redis.url);
  api.reset();
  const workers = await startTaxsyncWorkers(config, redis.url, api.url);
  const interval = 1000 / rate;
  const gaps: number[] = [];
  const started = performance.now();
  // Each record's updates one after another (each stored before the next), as an ERP save loop.
  await Promise.all(
    Array.from({ length: records }, async (_, record) => {
      let last = performance.now();
      for (let version = 1; version <= updates; version++) {
        await sleep(Math.max(0, started + version * interval - performance.now()));
        await producer.producer.accept({ events: [invoiceEvent(`burst-${record}`, version)] });
        const now = performance.now();
        if (version > 1) gaps.push(now - last);
        last = now;
      }
    }),
  );
  const sentMs = performance.now() - started;
  await settle(() => producer.idle(), 500, deadlineMs);
  const result = outcome(api, updates);
  await workers.stop();
  await producer.close();
  await redis.clear(prefix);
  gaps.sort((a, b) => a - b);
  return {
    windowMs,
    callsPerRecord: result.calls / records,
    ...result,
    sentMs: round(sentMs),
    gapP50Ms: round(gaps[Math.floor(gaps.length / 2)] ?? 0),
    gapP99Ms: round(gaps[Math.floor(gaps.length * 0.99)] ?? 0),
  };
}

/**
 * Scenario 4b: the API-cost case. Each of R records gets 100 updates one after another at
 * 50 updates/s (an ERP save loop, an order edited in the admin): taxsync at its window must make
 * ≤ 2 calls per record ending on the last update (its first update goes out at once, the rest as one); the same at TAXSYNC_COALESCE_MS=0 (the behaviour
 * before the window) and BENCH_BURST_WINDOWS (a sweep, e.g. `0,10,20,30,50`) are in the details.
 * The baseline is one call per update.
 */
export async function sequentialBurst(ctx: BenchContext): Promise<ScenarioResult[]> {
  const records = envInt('BENCH_BURST_RECORDS', 10);
  const updates = envInt('BENCH_BURST_UPDATES', 100);
  const rate = envInt('BENCH_BURST_RATE', 50);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const configured = benchConfig(ctx.redis.url, ctx.prefix('burst-config'), ctx.api.url).queue.coalesceDelayMs;
  const sweep = (process.env.BENCH_BURST_WINDOWS ?? '0')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n >= 0 && n !== configured);
  // Warm-up (JIT, connections, the first token), left out: a cold process stalls for tens of ms.
  await sequentialRun(ctx, configured, 2, 20, rate, deadlineMs);
  const main = await sequentialRun(ctx, configured, records, updates, rate, deadlineMs);
  const others = [];
  for (const windowMs of sweep) others.push(await sequentialRun(ctx, windowMs, records, updates, rate, deadlineMs));
  return [
    {
      id: '4b',
      name: `sequential burst ${updates} @ ${rate}/s`,
      metric: 'API calls/record',
      taxsync: main.callsPerRecord,
      baseline: updates,
      ratio: main.callsPerRecord / updates,
      ratioMeaning: 'taxsync calls ÷ one call per update (lower is better)',
      target: `≤ 2/record, final = last`,
      pass: main.maxPerRecord <= 2 && main.finalCorrect === records,
      details: { records, updates, rate, window: main, otherWindows: others },
    },
  ];
}
