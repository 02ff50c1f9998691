/**
 * `npm run bench`: each scenario against taxsync and against a bare-minimum baseline in the same
 * run, one table of ratios, the figures in bench/results/. Redis: REDIS_URL (the bench keeps to
 * its own prefixes and deletes them) or a redis-server of its own on a free port.
 *
 * Settings (environment) are listed in docs/performance.md. BENCH_STRICT=1 exits 1 when a target
 * is missed; BENCH_CPU_PROFILE=<dir> writes CPU profiles of the timed spans and child processes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startFakeApi, type FakeApi } from './lib/fake-api.js';
import { startBenchRedis, type BenchRedis } from './lib/redis.js';
import { table, type ScenarioResult } from './lib/report.js';
import { coalescing, sequentialBurst } from './scenarios/coalescing.js';
import { e2eLatency } from './scenarios/e2e-latency.js';
import { ingest } from './scenarios/ingest.js';
import { latencyBound } from './scenarios/latency-bound.js';
import { syncThroughput } from './scenarios/sync-throughput.js';
import { workerMemory } from './scenarios/worker-memory.js';

export interface BenchContext {
  api: FakeApi;
  redis: BenchRedis;
  /** A fresh Redis hash-tag prefix for one side of one scenario. */
  prefix(name: string): string;
  /** TAXSYNC_DATA_DIR of taxsync child processes (removed at the end). */
  dataDir: string;
}

/** Scenario 6a (Redis bytes per pending event) is measured within 2's fill. */
const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<ScenarioResult[]>> = {
  '1': ingest,
  '2': syncThroughput,
  '3': latencyBound,
  '4': coalescing,
  '4b': sequentialBurst,
  '5': e2eLatency,
  '6': workerMemory,
};

async function main(): Promise<void> {
  const wanted = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  for (const id of wanted) if (!SCENARIOS[id]) throw new Error(`unknown scenario ${id}; built: ${Object.keys(SCENARIOS).join(', ')}`);
  const redis = await startBenchRedis();
  const api = await startFakeApi();
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const used: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'taxsync-bench-'));
  const ctx: BenchContext = {
    api,
    redis,
    dataDir,
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
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(table(results));
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
  const json = JSON.stringify({ startedAt: started.toISOString(), machine, results }, null, 2);
  writeFileSync(file, json);
  writeFileSync(new URL('latest.json', dir), json);
  console.log(`figures written to ${file.pathname}`);
  // BENCH_STRICT=1: exit 1 when a scenario misses its target (for CI).
  if (process.env.BENCH_STRICT === '1' && results.some((r) => !r.pass)) process.exitCode = 1;
}

await main();
