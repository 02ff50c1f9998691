import type { BenchContext } from '../run.js';
import { startBaselineQueue, startBaselineWorker, startFloorWorker } from '../lib/baseline.js';
import { profiled } from '../lib/profile.js';
import { envInt, round, type ScenarioResult } from '../lib/report.js';
import { benchConfig, invoiceEvent, startProducer, startTaxsyncWorkers } from '../lib/taxsync.js';

/**
 * Scenario 2: N waiting invoice events for distinct records, drained by taxsync's workers into an
 * API that answers at once, vs a bare BullMQ worker sending one prepared PUT per job (undici).
 * Also scenario 6's Redis part: bytes per pending event, taxsync vs the bare queue.
 */
export async function syncThroughput(ctx: BenchContext): Promise<ScenarioResult[]> {
  const n = envInt('BENCH_SYNC_EVENTS', 20_000);
  const deadlineMs = envInt('BENCH_DEADLINE_MS', 300_000);
  const { api, redis } = ctx;

  // taxsync: fill the queue with no worker running, then time the drain.
  const prefix = ctx.prefix('sync');
  const config = benchConfig(redis.url, prefix, api.url);
  // taxsync's default (or TAXSYNC_CONCURRENCY_TRANSACTIONS); the baseline worker gets the same.
  const concurrency = config.queue.concurrency.transactions;
  const producer = await startProducer(config, redis.url);
  const events = Array.from({ length: n }, (_, i) => invoiceEvent(`inv-${i}`, 1));
  await producer.acceptAll(events);
  const taxsyncMemory = await redis.bytesUnder(prefix);
  api.reset();
  const started = performance.now();
  const workers = await profiled('sync-taxsync', async () => {
    const running = await startTaxsyncWorkers(config, redis.url, api.url);
    await api.waitForPuts(n, deadlineMs);
    return running;
  });
  const taxsyncMs = performance.now() - started;
  await workers.stop();
  await producer.close();
  const sample = api.byRecord.get('inv-0')?.lastBody;
  if (!sample) throw new Error('taxsync sent no PUT for inv-0');
  const taxsyncCalls = api.puts;
  await redis.clear(prefix);

  // Floor: taxsync's queue and latest-state store filled the same way, drained by the bare worker
  // plus taxsync's record store steps around each prepared PUT (bench/lib/baseline.ts).
  const floorPrefix = ctx.prefix('sync-floor');
  const floorConfig = benchConfig(redis.url, floorPrefix, api.url);
  const floorProducer = await startProducer(floorConfig, redis.url);
  await floorProducer.acceptAll(events);
  api.reset();
  const floorStarted = performance.now();
  const floorWorker = await profiled('sync-floor', async () => {
    const running = await startFloorWorker(redis.url, floorPrefix, api.url, concurrency, (id) => sample.replace('"external_id":"inv-0"', `"external_id":"${id}"`), floorConfig.trace);
    await api.waitForPuts(n, deadlineMs);
    return running;
  });
  const floorMs = performance.now() - floorStarted;
  await floorWorker.close();
  await floorProducer.close();
  await redis.clear(floorPrefix);

  // Baseline: the same bodies, prepared, one job each.
  const basePrefix = ctx.prefix('sync-base');
  const bodies = Array.from({ length: n }, (_, i) => sample.replace('"external_id":"inv-0"', `"external_id":"inv-${i}"`));
  const queue = await startBaselineQueue(redis.url, basePrefix, 'bench-sync');
  await queue.addAll(bodies);
  const baselineMemory = await redis.bytesUnder(basePrefix);
  api.reset();
  const baseStarted = performance.now();
  const worker = await profiled('sync-baseline', async () => {
    const running = await startBaselineWorker(redis.url, basePrefix, 'bench-sync', api.url, concurrency);
    await api.waitForPuts(n, deadlineMs);
    return running;
  });
  const baselineMs = performance.now() - baseStarted;
  await worker.close();
  await queue.close();
  await redis.clear(basePrefix);

  const taxsyncRate = (n / taxsyncMs) * 1000;
  const baselineRate = (n / baselineMs) * 1000;
  const floorRate = (n / floorMs) * 1000;
  const taxsyncBytes = taxsyncMemory.bytes / n;
  const baselineBytes = baselineMemory.bytes / n;
  return [
    {
      id: '2',
      name: 'sync throughput',
      metric: 'events/s',
      taxsync: taxsyncRate,
      baseline: baselineRate,
      ratio: taxsyncRate / baselineRate,
      ratioMeaning: 'taxsync events/s ÷ baseline events/s',
      target: '≥ 0.8',
      pass: taxsyncRate / baselineRate >= 0.8,
      details: { events: n, concurrency, taxsyncMs: round(taxsyncMs), baselineMs: round(baselineMs), taxsyncCalls, bodyBytes: sample.length },
    },
    {
      id: '2c',
      name: 'sync floor: bare + state steps',
      metric: 'events/s',
      taxsync: floorRate,
      baseline: baselineRate,
      ratio: floorRate / baselineRate,
      ratioMeaning:
        "the bare worker plus only latest-state-wins' Redis steps (taxsync's record store: read, mark applied with its trace line, the check after completion) ÷ the bare worker: the most row 2 can reach while keeping invariant 2",
      target: 'floor of row 2',
      pass: true,
      details: { floorMs: round(floorMs), taxsyncOfFloor: round(taxsyncRate / floorRate, 3) },
    },
    {
      id: '6a',
      name: 'redis bytes/pending event',
      metric: 'bytes',
      taxsync: taxsyncBytes,
      baseline: baselineBytes,
      ratio: taxsyncBytes / baselineBytes,
      ratioMeaning: 'taxsync bytes ÷ bare BullMQ bytes (lower is better)',
      target: '≤ 1.5',
      pass: taxsyncBytes / baselineBytes <= 1.5,
      details: {
        events: n,
        taxsyncKeys: taxsyncMemory.keys,
        baselineKeys: baselineMemory.keys,
        taxsyncBytes: taxsyncMemory.bytes,
        baselineBytes: baselineMemory.bytes,
        taxsyncBytesPerEventByKey: perEvent(taxsyncMemory.byKind, n),
        baselineBytesPerEventByKey: perEvent(baselineMemory.byKind, n),
      },
    },
  ];
}

/** Bytes per pending event of each kind of key, largest first. */
function perEvent(byKind: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(byKind)
      .sort(([, a], [, b]) => b - a)
      .map(([kind, bytes]) => [kind, round(bytes / n)]),
  );
}
