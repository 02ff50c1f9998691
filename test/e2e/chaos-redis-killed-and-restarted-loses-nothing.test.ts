import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { createRecordStore } from '../../src/queue/record-state.js';
import { killRedisServer, startRedisServer, type RedisServer } from '../helpers/chaos.js';
import { buildCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { e2eEnv, postSigned } from '../helpers/daemon.js';
import { erpCustomer, erpInvoice, type ErpEvent } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { freePort, waitForRedis } from '../helpers/redis-global-setup.js';
import { uniquePrefix } from '../helpers/redis.js';

/**
 * Chaos, short form (DESIGN.md invariants 1 and 2): Redis (AOF, fsync always) is SIGKILLed while
 * webhooks are being stored and workers are sending, and restarted on the same port and data
 * directory a second later. The same `taxsync start` process reconnects by itself, every
 * acknowledged event survives, and every record ends in the tax engine with its last state.
 * `npm run test:chaos` runs the long form (TAXSYNC_CHAOS_EVENTS events).
 */
const EVENTS = Number(process.env.TAXSYNC_CHAOS_EVENTS ?? 1_500);
/** Each record gets 1, 2 or 3 versions (2 on average), so about EVENTS / 2 records. */
const RECORDS = Math.max(6, Math.round(EVENTS / 2));
const BATCH = 10;
const POSTERS = 4;
/** How long after Redis answers again a 503 may still come back (ioredis reconnects within 2 s). */
const RECONNECT_GRACE_MS = 10_000;
const SETTLE_MS = Math.max(45_000, EVENTS * 20);

const versionsOf = (i: number) => 1 + (i % 3);
const isCustomer = (i: number) => i % 2 === 0;
const idOf = (i: number) => (isCustomer(i) ? `C-CHAOS-${i}` : `INV-CHAOS-${i}`);
const priceOf = (i: number, v: number) => `${10 + v}.${String(i % 100).padStart(2, '0')}`;

function eventFor(i: number, v: number): ErpEvent {
  return isCustomer(i) ? erpCustomer(idOf(i), v) : erpInvoice(idOf(i), v, [{ unit_price: priceOf(i, v), quantity: '2' }]);
}

/** Every version of every record, in rounds (all v1, then v2, then v3), each round in a fixed shuffled order. */
function allEvents(): ErpEvent[] {
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const events: ErpEvent[] = [];
  for (let v = 1; v <= 3; v += 1) {
    const round = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => versionsOf(i) >= v);
    for (let k = round.length - 1; k > 0; k -= 1) {
      const j = Math.floor(random() * (k + 1));
      [round[k], round[j]] = [round[j]!, round[k]!];
    }
    events.push(...round.map((i) => eventFor(i, v)));
  }
  return events;
}

interface Post {
  startedAt: number;
  answeredAt: number;
  status: number;
}

describe('Redis killed and restarted while events are stored and sent', () => {
  let main: string;
  let dir: string | undefined;
  let redis: RedisServer | undefined;
  let emulator: (Emulator & { url: string }) | undefined;
  let daemon: CliProcess | undefined;
  let check: Redis | undefined;

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  afterAll(async () => {
    check?.disconnect();
    await daemon?.kill();
    await killRedisServer(redis);
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged event, and the same daemon process applies the last state of every record', async () => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-chaos-redis-'));
    const redisPort = await freePort();
    redis = startRedisServer(redisPort, dir);
    await waitForRedis(redisPort);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;

    // A few ms per upsert keeps the workers busy while Redis goes away.
    emulator = await startEmulator({
      port: 0,
      host: '127.0.0.1',
      // Room for every upsert (the default keeps the last 1,000), for the summary printed at the end.
      requestLogLimit: EVENTS * 4,
      faults: [
        { kind: 'latency', route: 'customers.upsert', ms: 10 },
        { kind: 'latency', route: 'transactions.upsert', ms: 10 },
      ],
    });
    const running = emulator;
    const prefix = uniquePrefix();
    const httpPort = await freePort();
    daemon = spawnCli(main, ['start'], {
      ...e2eEnv(redisUrl, prefix, running.url),
      TAXSYNC_HTTP_PORT: String(httpPort),
      TAXSYNC_STALLED_INTERVAL_MS: '2000',
      TAXSYNC_CONCURRENCY_CUSTOMERS: '16',
      TAXSYNC_CONCURRENCY_TRANSACTIONS: '16',
      TAXSYNC_MAX_ATTEMPTS: '1000',
      LOG_LEVEL: 'warn',
    });
    await daemon.waitFor('taxsync is running');
    const pid = daemon.child.pid;

    // Feed every event in signed batches, like a platform: a 503 is retried, a 202 means stored.
    const events = allEvents();
    const batches: ErpEvent[][] = [];
    for (let i = 0; i < events.length; i += BATCH) batches.push(events.slice(i, i + BATCH));
    const posts: Post[] = [];
    let next = 0;
    let stored = 0;
    let duplicates = 0;
    const feedDeadline = Date.now() + SETTLE_MS;
    const poster = async () => {
      for (let b = next++; b < batches.length; b = next++) {
        let retried = false;
        for (;;) {
          const startedAt = Date.now();
          const res = await postSigned(`http://127.0.0.1:${httpPort}`, 'erp', batches[b]);
          const body = await res.text();
          posts.push({ startedAt, answeredAt: Date.now(), status: res.status });
          if (res.status === 202) break;
          // A 503 can come after the MULTI committed (its reply lost with Redis): the retry is then
          // a duplicate delivery, which the daemon answers 200 because it stored it (the delivery
          // marker commits with the events). Only ever as the answer to a retry.
          if (res.status === 200 && retried) {
            expect(JSON.parse(body), body).toEqual({ status: 'duplicate' });
            duplicates += 1;
            break;
          }
          expect(res.status, body).toBe(503);
          retried = true;
          if (Date.now() > feedDeadline) throw new Error(`batch ${b} still refused at the deadline: ${body}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        stored += 1;
      }
    };
    const feeding = Promise.all(Array.from({ length: POSTERS }, poster));
    // Awaited below; until then a failed POST must not count as an unhandled rejection.
    feeding.catch(() => undefined);

    // The chaos: once a third of the batches are stored and the workers are sending, SIGKILL
    // Redis, wait a second, start it again on the same port and directory (it replays its AOF).
    const upserts = () => running.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert' || e.endpoint === 'transactions.upsert');
    await eventually(() => stored >= batches.length / 3 && upserts().some((e) => e.outcome === 'in_flight'), 30_000);
    const killedAt = Date.now();
    const atKill = { stored, answered: upserts().filter((e) => e.outcome === 'answered').length, inFlight: upserts().filter((e) => e.outcome === 'in_flight').length };
    await killRedisServer(redis);
    await new Promise((r) => setTimeout(r, 1_000));
    redis = startRedisServer(redisPort, dir);
    await waitForRedis(redisPort);
    const restartedAt = Date.now();

    await feeding;
    expect(stored).toBe(batches.length);

    // A 503 only while Redis was down (or the daemon's connection had not come back yet).
    const refused = posts.filter((p) => p.status === 503);
    for (const p of refused) {
      expect(p.answeredAt).toBeGreaterThanOrEqual(killedAt);
      expect(p.startedAt).toBeLessThanOrEqual(restartedAt + RECONNECT_GRACE_MS);
    }

    // Every record ends with its last version: customers by name, invoices by price and total.
    const lastName = (i: number) => `${idOf(i)} version ${versionsOf(i)}`;
    const lastTotal = (i: number) => new Decimal(priceOf(i, versionsOf(i))).times(2).toFixed(2);
    const mismatches = () => {
      const customers = new Map(running.state.customers.live().map((e) => [e.value.external_id, e.value.name]));
      const invoices = new Map(
        running.state.transactions
          .live()
          .map((e) => [e.value.external_id, (e.value.amounts as { total_items_amount?: string } | undefined)?.total_items_amount]),
      );
      const wrong: string[] = [];
      for (let i = 0; i < RECORDS; i += 1) {
        const held = isCustomer(i) ? customers.get(idOf(i)) : invoices.get(idOf(i));
        const want = isCustomer(i) ? lastName(i) : lastTotal(i);
        if (held === undefined || (isCustomer(i) ? held : new Decimal(String(held)).toFixed(2)) !== want) wrong.push(`${idOf(i)}: ${String(held)} != ${want}`);
      }
      return wrong;
    };
    await eventually(() => mismatches().length === 0, SETTLE_MS).catch(() => {
      throw new Error(`records not at their last state: ${mismatches().slice(0, 10).join('; ')}\n${daemon!.output().slice(-4_000)}`);
    });
    expect(running.state.customers.live().length).toBe(Math.ceil(RECORDS / 2));
    expect(running.state.transactions.live().length).toBe(Math.floor(RECORDS / 2));

    // The same process did it all: it reconnected by itself.
    expect(daemon.child.pid).toBe(pid);
    expect(daemon.child.exitCode, daemon.output()).toBeNull();
    expect(daemon.child.signalCode).toBeNull();

    // Redis agrees: every record applied at its newest version, and no dead letter.
    check = createRedis(redisUrl, 'worker');
    const records = createRecordStore(check, createKeys(prefix));
    await eventually(async () => {
      for (let i = 0; i < RECORDS; i += 1) {
        const state = await records.read({ kind: isCustomer(i) ? 'customer' : 'transaction', source: 'api', external_id: idOf(i) });
        if (state.seq === 0 || state.appliedSeq !== state.seq) return false;
      }
      return true;
    }, 20_000);
    const queues = createQueues(check, prefix);
    try {
      const deadLetters = createDeadLetterStore(queues['dead-letter']);
      expect((await deadLetters.list({ limit: 5 })).map((e) => `${e.error.code}: ${e.error.message}`)).toEqual([]);
      expect(await deadLetters.count()).toBe(0);
    } finally {
      await closeQueues(queues);
    }
    console.info(
      `chaos: ${events.length} events in ${batches.length} batches, ${RECORDS} records, ${refused.length} POSTs refused with 503 and retried ` +
        `(${duplicates} of them stored before the 503: their retry was a duplicate), ` +
        `${upserts().length} upserts, redis down ${restartedAt - killedAt} ms; at the kill: ${atKill.stored} batches stored, ` +
        `${atKill.answered} upserts answered, ${atKill.inFlight} in flight`,
    );
  }, 120_000);
});
