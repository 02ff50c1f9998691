/**
 * `npm run bench`: each scenario against taxsync and against a bare-minimum baseline in the same
 * run, one table of ratios, the figures in bench/results/. Redis: REDIS_URL (the bench keeps to
 * its own prefixes and deletes them) or a redis-server of its own on a free port.
 *
 * Settings (environment): BENCH_SCENARIOS (default "2,4"), BENCH_SYNC_EVENTS (20000),
 * BENCH_COALESCE_RECORDS (100), BENCH_COALESCE_UPDATES (10000), BENCH_DEADLINE_MS (300000),
 * and any TAXSYNC_* setting for taxsync's side (TAXSYNC_CONCURRENCY_TRANSACTIONS also sets the
 * baseline worker's concurrency; default 50). BENCH_STRICT=1 exits 1 when a target is missed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { startFakeApi, type FakeApi } from './lib/fake-api.js';
import { startBenchRedis, type BenchRedis } from './lib/redis.js';
import { table, type ScenarioResult } from './lib/report.js';
import { coalescing } from './scenarios/coalescing.js';
import { syncThroughput } from './scenarios/sync-throughput.js';

export interface BenchContext {
  api: FakeApi;
  redis: BenchRedis;
  /** A fresh Redis hash-tag prefix for one side of one scenario. */
  prefix(name: string): string;
}

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<ScenarioResult[]>> = {
  '2': syncThroughput,
  '4': coalescing,
};
const NOT_BUILT = ['1 ingest', '3 latency-bound', '5 end-to-end latency', '6b worker RSS'];

async function main(): Promise<void> {
  const wanted = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  for (const id of wanted) if (!SCENARIOS[id]) throw new Error(`unknown scenario ${id}; built: ${Object.keys(SCENARIOS).join(', ')}`);
  const redis = await startBenchRedis();
  const api = await startFakeApi();
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const used: string[] = [];
  const ctx: BenchContext = {
    api,
    redis,
    prefix(name) {
      const prefix = `{taxsync-bench-${run}-${name}}`;
      used.push(prefix);
      return prefix;
    },
  };
  const results: ScenarioResult[] = [];
  const started = new Date();
  try {
    for (const id of wanted) {
      console.error(`scenario ${id}…`);
      const t0 = performance.now();
      results.push(...(await SCENARIOS[id]!(ctx)));
      console.error(`scenario ${id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    for (const prefix of used) await redis.clear(prefix).catch(() => undefined);
    await api.close();
    await redis.stop();
  }
  console.log(table(results));
  console.log(`not built yet: ${NOT_BUILT.join(', ')}`);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    redis: redis.version,
    platform: `${process.platform} ${process.arch}`,
  };
  const dir = new URL('../../bench/results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`bench-${started.toISOString().replace(/[:.]/g, '-')}.json`, dir);
  const json = JSON.stringify({ startedAt: started.toISOString(), machine, results, notBuilt: NOT_BUILT }, null, 2);
  writeFileSync(file, json);
  writeFileSync(new URL('latest.json', dir), json);
  console.log(`figures written to ${file.pathname}`);
  // BENCH_STRICT=1: exit 1 when a scenario misses its target (for CI).
  if (process.env.BENCH_STRICT === '1' && results.some((r) => !r.pass)) process.exitCode = 1;
}

await main();
