import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';

export interface BenchRedis {
  url: string;
  /** redis-server's version, from INFO server. */
  version: string;
  /** Deletes every key under `prefix` (used when REDIS_URL is shared). */
  clear(prefix: string): Promise<void>;
  /**
   * Sum of MEMORY USAGE (SAMPLES 0) over every key under `prefix`, and the same per kind of key
   * (`kindOfKey`), which is what docs/performance.md's per-key table reports.
   */
  bytesUnder(prefix: string): Promise<{ bytes: number; keys: number; byKind: Record<string, number> }>;
  stop(): Promise<void>;
}

// BullMQ's own keys of a queue (`<prefix>:<queue>:<name>`); any other name there is a job hash.
const BULLMQ_KEYS = new Set(['wait', 'paused', 'meta', 'id', 'delayed', 'prioritized', 'pc', 'active', 'events', 'stalled', 'stalled-check', 'marker', 'completed', 'failed', 'limiter', 'de', 'repeat']);

/** `state`, `event`, `trace`… for taxsync's keys; `<queue> job`, `<queue> wait`… for BullMQ's. */
export function kindOfKey(prefix: string, key: string): string {
  const [first = '', second = ''] = key.slice(prefix.length + 1).split(':');
  if (['customers', 'transactions', 'vat-submissions', 'dead-letter', 'bench-sync'].includes(first)) {
    return `${first} ${BULLMQ_KEYS.has(second) ? second : 'job'}`;
  }
  return first;
}

async function scanKeys(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  // Prefixes are hash tags such as {bench-…}: escape the glob characters.
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** REDIS_URL when set (the bench keeps to its own prefixes), else a redis-server of its own on a free port. */
export async function startBenchRedis(): Promise<BenchRedis> {
  let url = process.env.REDIS_URL;
  let stopServer = async (): Promise<void> => {};
  if (!url) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-bench-redis-'));
    // AOF on with everysec, as the zero-configuration Redis and most deployments run it (and as
    // TAXSYNC_ACK_DURABILITY=aof, the default, requires). BENCH_REDIS_SERVER picks another binary
    // (valkey-server: WAITAOF; redis-server 7.0 has none and taxsync falls back to INFO checks).
    const binary = process.env.BENCH_REDIS_SERVER || 'redis-server';
    // No automatic AOF rewrite: a rewrite (a fork copying the data set) in the middle of one side
    // of a comparison would be measured as that side's cost (it made scenario 1b look slower than 1).
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--auto-aof-rewrite-percentage', '0', '--dir', dir];
    const child = spawn(binary, args, {
      stdio: 'ignore',
    });
    const spawned = await new Promise<boolean>((resolve) => {
      child.once('spawn', () => resolve(true));
      child.once('error', () => resolve(false));
    });
    if (!spawned) throw new Error(`${binary} could not be started: install it or set REDIS_URL`);
    await waitForPing(port);
    url = `redis://127.0.0.1:${port}`;
    stopServer = async () => {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const client = new Redis(url, { maxRetriesPerRequest: null });
  const info = await client.info('server');
  const valkey = /valkey_version:(\S+)/.exec(info)?.[1];
  const version = valkey ? `valkey ${valkey}` : (/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown');
  return {
    url,
    version,
    async clear(prefix) {
      const keys = await scanKeys(client, prefix);
      for (let i = 0; i < keys.length; i += 1000) await client.unlink(...keys.slice(i, i + 1000));
    },
    async bytesUnder(prefix) {
      const keys = await scanKeys(client, prefix);
      let bytes = 0;
      const byKind: Record<string, number> = {};
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        const pipeline = client.pipeline();
        for (const key of batch) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
        const results = (await pipeline.exec()) ?? [];
        results.forEach(([error, value], j) => {
          if (error) return;
          const kind = kindOfKey(prefix, batch[j]!);
          bytes += Number(value ?? 0);
          byKind[kind] = (byKind[kind] ?? 0) + Number(value ?? 0);
        });
      }
      return { bytes, keys: keys.length, byKind };
    },
    async stop() {
      client.disconnect();
      await stopServer();
    },
  };
}
