import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClients } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';
import { createLifecycle } from '../../src/daemon/lifecycle.js';
import { startWork } from '../../src/daemon/work.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { startFakeApi, type RecordedRequest } from '../helpers/fake-api.js';
import { eventually } from '../helpers/pipeline.js';
import { uniquePrefix } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * DESIGN.md invariant 5: a duplicate-number answer after an attempt that may have landed means
 * "already accepted" — only if the ledger still knows that attempt was made. The claim (the entry
 * moved to in flight before the POST) is that knowledge. Written to Redis's memory only, it can be
 * lost after the POST went out: a failover to a replica that had not received it, or a crash of a
 * Redis whose AOF never got it (a full disk: Redis answers the write OK, then fails to append it).
 * The next attempt then takes the service's duplicate answer for a real conflict and dead-letters
 * taxsync's own filing as VAT_DUPLICATE. So a claim must be as durable as a webhook's
 * acknowledgement (TAXSYNC_ACK_DURABILITY) before the POST, or not be sent.
 *
 * The workers run as `taxsync work` builds them (src/daemon/work.ts), on a Redis of the test's
 * own; after the failover or the crash the next attempt runs on the Redis that is left.
 */

interface Server {
  port: number;
  url: string;
  child: ChildProcess;
  exited: Promise<void>;
}

function startServer(binary: string, args: string[], port: number): Server {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...args], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { port, url: `redis://127.0.0.1:${port}`, child, exited };
}

async function kill(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGCONT');
  server.child.kill('SIGKILL');
  await server.exited;
}

const SETTINGS = { vat: { seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }], rates: { DE: { standard: '19.00' } } } };

/** The vat-submissions worker as `taxsync work --queue vat-submissions` runs it, on `url`. */
async function startVatWorker(url: string, prefix: string, apiUrl: string, env: Record<string, string>): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger({ level: 'silent' });
  const lifecycle = createLifecycle({ logger, deadlineMs: 15_000 });
  const config = loadConfig({
    REDIS_URL: url,
    TAXSYNC_PREFIX: prefix,
    TAX_API_URL: apiUrl,
    TAX_API_CLIENT_ID: DEFAULT_CLIENT.clientId,
    TAX_API_CLIENT_SECRET: DEFAULT_CLIENT.clientSecret,
    TAXSYNC_VAT_BACKOFF_BASE_MS: '50',
    TAXSYNC_VAT_BACKOFF_CAP_MS: '200',
    TAXSYNC_CONCURRENCY_VAT: '1',
    // Nothing of the worker's own writes between the test's step and the claim.
    TAXSYNC_SWEEP_INTERVAL_MS: '600000',
    TAXSYNC_VAT_RESOLVER_INTERVAL_MS: '600000',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const api = createApiClients({ taxUrl: apiUrl, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  await startWork({ config, settings: parseSettings(SETTINGS), redisTarget: url, tax: api.tax, vat: api.vat, logger, lifecycle, queues: ['vat-submissions'] });
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        await lifecycle.shutdown('test');
        await api.close();
      })()),
  };
}

describe('a VAT claim is durable before its POST goes out', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /** After the failover or crash: the next attempt on what is left, until it settles. */
  async function expectFiledOnce(rig: VatRig, number: string): Promise<void> {
    const record = vatRecord(number);
    await rig.settle(record);
    const held = rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number === number);
    // 100.00 net at 19 % = 19.00 VAT, filed once.
    expect(held.map((t) => `${t.net}/${t.vat}`)).toEqual(['100.00/19.00']);
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect((await rig.deadLettersOf(record)).map((l) => `${l.error.code}: ${l.error.message}`)).toEqual([]);
    expect(entry?.state, 'the ledger knows the invoice is filed').toBe('confirmed');
  }

  it('files once when Redis fails over to a replica right after the claim (TAXSYNC_ACK_DURABILITY=replica)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-claim-failover-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const master = startServer('redis-server', ['--appendonly', 'no'], await freePort());
    cleanup.push(() => kill(master));
    await waitForPing(master.port);
    const replica = startServer('redis-server', ['--appendonly', 'yes', '--dir', dir, '--replicaof', '127.0.0.1', String(master.port)], await freePort());
    cleanup.push(() => kill(replica));
    await waitForPing(replica.port);
    const admin = new Redis(replica.url);
    cleanup.push(() => admin.disconnect());
    await eventually(async () => /master_link_status:up/.test(await admin.info('replication')), 15_000);

    const prefix = uniquePrefix();
    const rig = await createVatRig({ url: master.url, prefix });
    cleanup.push(() => rig.close());
    await rig.accept(invoiceEvent('INV-F1', 1, [['100.00', '0.19']]));
    // The invoice and its job are on the replica; from now on it receives nothing (a partition:
    // it follows a master that is not there, keeping what it has).
    expect(Number(await rig.redis.call('WAIT', '1', '5000'))).toBe(1);
    await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
    await eventually(async () => /connected_slaves:0/.test(await rig.redis.info('replication')), 15_000);

    const worker = await startVatWorker(master.url, prefix, rig.emulator.url, { TAXSYNC_ACK_DURABILITY: 'replica', TAXSYNC_ACK_TIMEOUT_MS: '300' });
    const stopWorker = async () => worker.stop();
    cleanup.push(stopWorker);
    // The claim and what became of the attempt (accepted, or released as not durable).
    const entryKey = rig.keys.vatLedger(rig.emulator.state.entityJurisdictions.keys().next().value as string, 'INV-F1');
    await eventually(async () => (await rig.redis.llen(`${entryKey}:history`)) >= 2);
    await stopWorker();
    // No replica confirmed the claim: nothing went out on it.
    expect(rig.emulator.state.vatTransactions.live()).toEqual([]);
    expect(await rig.redis.hget(entryKey, 'note')).toMatch(/^not sent: the claim could not be confirmed durable \(no replica confirmed the write/);

    // Failover: the master dies, the replica (without the claim) is promoted.
    await kill(master);
    await admin.call('REPLICAOF', 'NO', 'ONE');
    const after = await createVatRig({ url: replica.url, prefix, emulator: rig.emulator });
    cleanup.push(() => after.close());
    await expectFiledOnce(after, 'INV-F1');
  }, 60_000);

  const mountable = canMountTmpfs();
  const servers = ['redis-server', process.env.TAXSYNC_TEST_WAITAOF_SERVER || 'valkey-server'].filter((b, i, all) => all.indexOf(b) === i && onPath(b));
  for (const binary of servers) {
    it.skipIf(!mountable)(`files once when ${binary} crashes after a claim its AOF never got (a full disk; TAXSYNC_ACK_DURABILITY=aof)`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'taxsync-claim-aof-'));
      cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
      mkdirSync(join(dir, 'data'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', join(dir, 'data')]);
      cleanup.push(() => void spawnSync('umount', ['-l', join(dir, 'data')]));
      const port = await freePort();
      const args = ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', join(dir, 'data')];
      let server = startServer(binary, args, port);
      cleanup.push(() => kill(server));
      await waitForPing(port, 15_000);

      const prefix = uniquePrefix();
      const rig = await createVatRig({ url: server.url, prefix });
      cleanup.push(() => rig.close());
      const pad = new Redis(server.url);
      cleanup.push(() => pad.disconnect());
      await rig.accept(invoiceEvent('INV-A1', 1, [['100.00', '0.19']]));

      // The VAT service, behind a front that fills Redis's disk when the worker reads the
      // registrations: the next write Redis appends to its AOF is the claim.
      const front = await startFakeApi();
      cleanup.push(() => front.close());
      let filled = false;
      front.fallback(async (req, res) => {
        if (!filled && req.method === 'GET' && req.path.startsWith('/registrations/v1/registrations')) {
          filled = true;
          await fillDisk(pad, join(dir, 'data'));
        }
        await forward(rig.emulator.url, req, res);
      });

      const worker = await startVatWorker(server.url, prefix, front.url, { TAXSYNC_ACK_DURABILITY: 'aof', TAXSYNC_ACK_TIMEOUT_MS: '500' });
      const stopWorker = async () => worker.stop();
      cleanup.push(stopWorker);
      const entryKey = rig.keys.vatLedger(rig.emulator.state.entityJurisdictions.keys().next().value as string, 'INV-A1');
      // Claimed (in Redis's memory); stopping the worker lets the attempt finish.
      await eventually(async () => filled && (await pad.exists(entryKey)) === 1);
      await stopWorker();
      // The claim never reached the disk: nothing went out on it.
      expect(rig.emulator.state.vatTransactions.live()).toEqual([]);

      // The crash: memory lost; the disk freed; Redis starts again from its AOF.
      await kill(server);
      rmSync(join(dir, 'data', 'filler'), { force: true });
      server = startServer(binary, args, port);
      await waitForPing(port, 15_000);
      await eventually(async () => {
        try {
          return (await pad.ping()) === 'PONG' && (await rig.redis.ping()) === 'PONG';
        } catch {
          return false;
        }
      });
      await expectFiledOnce(rig, 'INV-A1');
    }, 60_000);
  }
});

async function forward(base: string, req: RecordedRequest, res: ServerResponse): Promise<void> {
  const answer = await request(`${base}${req.url}`, {
    method: req.method as 'GET' | 'POST',
    headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json'), authorization: String(req.headers.authorization ?? '') },
    ...(req.method === 'GET' ? {} : { body: req.body }),
  });
  res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
  res.end(await answer.body.text());
}

const PAGE = 4096;

/** The AOF file Redis appends to (Redis ≥ 7 and Valkey: the newest `.incr.aof` of appendonlydir). */
function aofFile(dir: string): string {
  const files = readdirSync(join(dir, 'appendonlydir')).filter((f) => f.endsWith('.incr.aof'));
  const seq = (f: string) => Number(/\.(\d+)\.incr\.aof$/.exec(f)?.[1] ?? 0);
  return join(dir, 'appendonlydir', files.sort((a, b) => seq(b) - seq(a))[0]!);
}

/**
 * Leaves Redis's AOF no room for another byte: its file is padded (through Redis) to a page
 * boundary — a tmpfs file owns whole pages, so a write into its last page's slack would still fit —
 * and a filler file then takes every free page.
 */
async function fillDisk(redis: Redis, dir: string): Promise<void> {
  const file = aofFile(dir);
  for (let i = 0; i < 5 && statSync(file).size % PAGE !== 0; i++) {
    let need = PAGE - (statSync(file).size % PAGE);
    if (need < 64) need += PAGE;
    // `*3 $3 SET $3 pad $<n> <value>`, in RESP as the AOF holds it.
    const overhead = (n: number) => `*3\r\n$3\r\nSET\r\n$3\r\npad\r\n$${n}\r\n\r\n`.length;
    let n = need - overhead(need);
    while (n + overhead(n) > need) n -= 1;
    while (n + overhead(n) < need) n += 1;
    await redis.set('pad', 'x'.repeat(n));
  }
  expect(statSync(file).size % PAGE, 'the AOF ends on a page boundary').toBe(0);
  const fd = openSync(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

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
