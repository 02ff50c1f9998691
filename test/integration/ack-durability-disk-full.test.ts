import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckDurability } from '../../src/config/index.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createAckGuard } from '../../src/queue/ack-durability.js';
import { closeQueues, createQueues, createRedis, whenReady } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { createProducer } from '../../src/queue/producer.js';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';
import { eventually } from '../helpers/pipeline.js';
import { uniquePrefix } from '../helpers/redis.js';
import { testConnector, testSettings } from '../helpers/test-connector.js';

/**
 * A webhook answered 202 must survive Redis's disk filling up (DESIGN.md invariant 1). Redis's
 * AOF lives on a tmpfs of 2 MiB that a filler file leaves a few hundred KB of; webhooks are sent
 * one after the other until the disk is full, then Redis is killed (its memory is lost), the
 * filler removed and Redis started again from its AOF: every event answered 202 must be there.
 *
 * Each redis-server found is tried: the one on PATH (Debian bookworm: Redis 7.0, no WAITAOF, so
 * taxsync checks INFO persistence after each write) and valkey-server (WAITAOF), or the binary
 * named by TAXSYNC_TEST_WAITAOF_SERVER. Mounting a tmpfs needs root: elsewhere the test skips
 * with one line.
 */

const SECRET = 'disk-full-test-secret';

function canMountTmpfs(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const dir = mkdtempSync(join(tmpdir(), 'taxsync-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function onPath(binary: string): boolean {
  return spawnSync(binary, ['--version'], { stdio: 'ignore' }).status === 0;
}

const SERVERS = [
  'redis-server',
  process.env.TAXSYNC_TEST_WAITAOF_SERVER || 'valkey-server',
].filter((binary, i, all) => all.indexOf(binary) === i && onPath(binary));

const mountable = canMountTmpfs();
if (!mountable) console.warn('skipping the disk-full tests: mounting a small tmpfs needs root on Linux');

interface Server {
  port: number;
  child: ChildProcess;
}

async function startServer(binary: string, dir: string, port: number): Promise<Server> {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', dir], { stdio: 'ignore' });
  await waitForPing(port, 15_000, () => child.exitCode !== null);
  return { port, child };
}

async function kill(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGKILL');
  });
}

function event(n: number) {
  return {
    id: `evt-disk-${n}`,
    type: 'customer.upserted',
    occurred_at: '2026-11-20T10:00:00Z',
    connector: 'test',
    record: { kind: 'customer', source: 'api', external_id: `C-DISK-${n}` },
    // About 1.5 KB per event: the disk fills after a few hundred webhooks.
    data: { name: `customer ${n} ${'x'.repeat(1_500)}` },
  };
}

describe.skipIf(!mountable || SERVERS.length === 0)('acknowledgements when Redis cannot write its AOF (disk full)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function rig(binary: string, durability: AckDurability) {
    const root = mkdtempSync(join(tmpdir(), 'taxsync-disk-full-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', root]);
    cleanups.push(() => void spawnSync('umount', ['-l', root]));
    const dir = join(root, 'redis');
    mkdirSync(dir);
    // Leaves a few hundred KB for the AOF once Redis has started.
    const filler = join(root, 'filler');
    writeFileSync(filler, Buffer.alloc(1_600 * 1024));
    const port = await freePort();
    let server = await startServer(binary, dir, port);
    cleanups.push(() => kill(server));

    const prefix = uniquePrefix();
    const connection = createRedis(`redis://127.0.0.1:${port}`, 'producer');
    connection.on('error', () => {});
    await whenReady(connection);
    const queues = createQueues(connection, prefix);
    const keys = createKeys(prefix);
    const ack = createAckGuard(connection, { mode: durability, timeoutMs: 300, slotKey: keys.counters });
    const producer = createProducer({
      queues,
      connection,
      keys,
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
      ack,
    });
    const plan = await ack.ready();
    const app: FastifyInstance = await buildApp({
      connectors: { test: { connector: testConnector, settings: testSettings(SECRET), connection: { id: 'test', source: testSettings(SECRET).source, externalIdPrefix: '' } } },
      producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 64 * 1024,
      rawBodyLimitBytes: 1024,
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
    });
    cleanups.push(async () => {
      await app.close();
      await closeQueues(queues);
      connection.disconnect();
    });

    const post = async (n: number) => {
      const payload = JSON.stringify({ delivery: `d-${n}`, events: [event(n)] });
      const res = await app.inject({ method: 'POST', url: '/webhooks/test', payload, headers: { 'content-type': 'application/json', ...testConnector.sign(Buffer.from(payload), SECRET, new Date()) } });
      return res.statusCode;
    };

    /**
     * Sends webhooks until the disk is full (ten refusals in a row), `lanes` at a time (several in
     * flight share one confirmation: src/queue/ack-durability.ts); answers what got a 202.
     */
    const fill = async (lanes = 1) => {
      const acknowledged: number[] = [];
      let refusedInARow = 0;
      let n = 0;
      const lane = async () => {
        while (refusedInARow < 10 && n < 5_000) {
          const mine = n++;
          const status = await post(mine);
          if (status === 202) {
            acknowledged.push(mine);
            refusedInARow = 0;
          } else {
            expect(status).toBe(503);
            refusedInARow += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      return { acknowledged, sent: n };
    };

    /** Kills Redis (its memory is lost), frees the disk, starts it again from the AOF; answers the events it holds. */
    const crashAndRecover = async (numbers: readonly number[]) => {
      await kill(server);
      rmSync(filler, { force: true });
      server = await startServer(binary, dir, port);
      const reader = new Redis(port, { maxRetriesPerRequest: 1 });
      try {
        const present: number[] = [];
        for (const n of numbers) if ((await reader.exists(keys.state(`customer|api|C-DISK-${n}`))) === 1) present.push(n);
        return present;
      } finally {
        reader.disconnect();
      }
    };

    return { plan, post, fill, crashAndRecover, freeDisk: () => rmSync(filler, { force: true }) };
  }

  for (const binary of SERVERS) {
    it(`${binary}: answers 503 once the AOF cannot be written, never 202 for what the disk did not take, and 202 again once it has room`, { timeout: 120_000 }, async () => {
      const r = await rig(binary, 'aof');
      expect(['waitaof', 'aof-status']).toContain(r.plan.method);
      const { acknowledged, sent } = await r.fill();
      expect(acknowledged.length).toBeGreaterThan(10);
      expect(sent - acknowledged.length).toBeGreaterThanOrEqual(10);

      // Room again: Redis retries its AOF write by itself, and webhooks are accepted again.
      r.freeDisk();
      let next = sent;
      await eventually(async () => (await r.post(next++)) === 202, 20_000);
      acknowledged.push(next - 1);

      const present = await r.crashAndRecover(acknowledged);
      expect(acknowledged.filter((n) => !present.includes(n))).toEqual([]);
    });

    it(`${binary}: with webhooks in flight at once (sharing their confirmations), never 202 for what the disk did not take`, { timeout: 120_000 }, async () => {
      const r = await rig(binary, 'aof');
      const { acknowledged, sent } = await r.fill(8);
      expect(acknowledged.length).toBeGreaterThan(10);
      expect(sent - acknowledged.length).toBeGreaterThanOrEqual(10);
      const present = await r.crashAndRecover(acknowledged);
      expect(acknowledged.filter((n) => !present.includes(n))).toEqual([]);
    });
  }

  it(`${SERVERS[0]}: with TAXSYNC_ACK_DURABILITY=none the same full disk loses an acknowledged webhook (why aof is the default)`, { timeout: 120_000 }, async () => {
    const r = await rig(SERVERS[0]!, 'none');
    const { acknowledged } = await r.fill();
    const present = await r.crashAndRecover(acknowledged);
    expect(acknowledged.filter((n) => !present.includes(n)).length).toBeGreaterThanOrEqual(1);
  });
});
