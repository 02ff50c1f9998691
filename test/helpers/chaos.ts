import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import type { Redis } from 'ioredis';
import { recordKeyString } from '../../src/domain/record-key.js';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions, type FaultRuleInput } from '../../src/emulator/index.js';
import { testVariety } from './emulator-variety.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { createRecordStore } from '../../src/queue/record-state.js';
import { readTrace } from '../../src/queue/trace.js';
import { buildCli, spawnCli, type CliProcess } from './cli.js';
import { e2eEnv, postSigned } from './daemon.js';
import { erpCustomer, erpInvoice, erpRefund, type ErpEvent } from './erp-events.js';
import { eventually } from './pipeline.js';
import { freePort, waitForRedis } from './redis-global-setup.js';

/**
 * What the failure tests (test/e2e/chaos-*) share: their own redis-server, a mixed workload of
 * customers, invoices, linked refunds and VAT submissions with the checks of its end state, and a
 * feeder that posts it like a platform (retrying what was not acknowledged).
 */

/** Events of a chaos test: `short` inside `npm test`, TAXSYNC_CHAOS_EVENTS under `npm run test:chaos`. */
export function chaosEvents(short: number): number {
  const long = Number(process.env.TAXSYNC_CHAOS_EVENTS);
  return Number.isFinite(long) && long > 0 ? long : short;
}

/** The long form runs (`npm run test:chaos` sets TAXSYNC_CHAOS_EVENTS). */
export const LONG_FORM = process.env.TAXSYNC_CHAOS_EVENTS !== undefined;

export interface RedisServer {
  child: ChildProcess;
  exited: Promise<void>;
}

/** A redis-server of the test's own on `port`, with its AOF (fsync always) under `dir`. */
export function startRedisServer(port: number, dir: string): RedisServer {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir, '--save', ''],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited };
}

export async function killRedisServer(server: RedisServer | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  // A stopped server ignores SIGKILL's cleanup until it runs again.
  server.child.kill('SIGCONT');
  server.child.kill('SIGKILL');
  await server.exited;
}

/**
 * Settings of the process that queues the jobs (they carry their attempts): a chaos test checks
 * that failures are retried until they go through, so no job may run out of attempts — not even
 * behind the refund lock a killed process leaves on an invoice (60 s; about 100 s of attempts at
 * e2eEnv()'s retry delays).
 */
export const NEVER_GIVE_UP = { TAXSYNC_MAX_ATTEMPTS: '1000', TAXSYNC_VAT_MAX_ATTEMPTS: '1000' } as const;

/** Every upsert takes a few ms and a VAT submission is made at once but answered later, so a kill can fall between the two (the ambiguous case). */
export const BUSY_API: readonly FaultRuleInput[] = [
  { kind: 'latency', route: 'customers.upsert', ms: 20 },
  { kind: 'latency', route: 'transactions.upsert', ms: 20 },
  { kind: 'latency', route: 'vat.submit', ms: 100, phase: 'after' },
];

export type Running = Emulator & { url: string };

export interface OwnRedis {
  url: string;
  /** The running server (a new one after restart()). */
  server(): RedisServer;
  /** Starts the server again on the same port and data (it replays its AOF). */
  restart(): Promise<void>;
  /** A connection of the test's own, closed after the test. */
  connect(): Redis;
}

export interface ChaosRig {
  /** The built `taxsync` CLI. */
  main: string;
  /** A temporary folder of the test's own (settings file, Redis data). */
  dir: string;
  /** An emulator on a free port, closed after the test. */
  emulator(options?: EmulatorOptions): Promise<Running>;
  /** A redis-server of the test's own (AOF under `dir`), killed after the test. */
  redis(): Promise<OwnRedis>;
  /** A `taxsync` child process, SIGKILLed after the test if still running. */
  spawn(args: string[], env: Record<string, string>): CliProcess;
  /**
   * The environment of a chaos child process against `emulatorUrl` with VAT on (settings in
   * `dir`): stalled jobs recovered after about 2 s, VAT leases of 3 s, 8 jobs per queue at once,
   * no job ever out of attempts, warnings logged.
   */
  env(redisUrl: string, prefix: string, emulatorUrl: string): Record<string, string>;
  /** The settings file `env()` names (VAT on for the workload's German invoices). */
  settingsFile: string;
}

/** Builds the CLI once per file and gives each test a fresh rig, torn down after it. */
export function useChaosRig(): ChaosRig {
  let main = '';
  let closers: (() => Promise<void> | void)[] = [];
  const rig = {} as ChaosRig;
  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);
  beforeEach(() => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-chaos-'));
    const settingsFile = writeVatSettings(dir);
    closers = [() => rmSync(dir, { recursive: true, force: true })];
    Object.assign(rig, {
      main,
      dir,
      settingsFile,
      async emulator(options: EmulatorOptions = {}) {
        const running = await startEmulator({ faults: BUSY_API, variety: testVariety(), ...options, port: 0, host: '127.0.0.1' });
        closers.push(() => running.close());
        return running;
      },
      async redis() {
        const port = await freePort();
        let server = startRedisServer(port, dir);
        closers.push(() => killRedisServer(server));
        await waitForRedis(port);
        const url = `redis://127.0.0.1:${port}`;
        return {
          url,
          server: () => server,
          async restart() {
            server = startRedisServer(port, dir);
            await waitForRedis(port);
          },
          connect() {
            const connection = createRedis(url, 'worker');
            closers.push(() => connection.disconnect());
            return connection;
          },
        };
      },
      spawn(args: string[], env: Record<string, string>) {
        const p = spawnCli(main, args, env);
        closers.push(() => p.kill());
        return p;
      },
      env: (redisUrl: string, prefix: string, emulatorUrl: string) => ({
        ...e2eEnv(redisUrl, prefix, emulatorUrl),
        ...NEVER_GIVE_UP,
        TAXSYNC_CONFIG: settingsFile,
        TAXSYNC_STALLED_INTERVAL_MS: '2000',
        TAXSYNC_VAT_LEASE_MS: '3000',
        TAXSYNC_CONCURRENCY_CUSTOMERS: '8',
        TAXSYNC_CONCURRENCY_TRANSACTIONS: '8',
        TAXSYNC_CONCURRENCY_VAT: '4',
        LOG_LEVEL: 'warn',
      }),
    } satisfies ChaosRig);
  });
  afterEach(async () => {
    // Processes first, then what they used.
    for (const close of closers.splice(0).reverse()) await close();
  });
  return rig;
}

/** The seller's German entity jurisdiction (any UUID: the emulator accepts it, with a warning). */
export const VAT_ENTITY_JURISDICTION = '0d000000-0000-4000-8000-00000000c4a0';

/** Writes a settings file (TAXSYNC_CONFIG) turning VAT on for German sales; answers its path. */
export function writeVatSettings(dir: string): string {
  const path = join(dir, 'taxsync-settings.json');
  const settings = {
    vat: {
      seller_country: 'DE',
      registrations: [{ entity_jurisdiction: VAT_ENTITY_JURISDICTION, country: 'DE' }],
      // Only the workload's German invoices are paid: the US ones stay out of VAT.
      submit_when: 'paid',
      rates: { DE: { standard: '19.00' } },
    },
  };
  writeFileSync(path, JSON.stringify(settings));
  return path;
}

type Shape = 'customer' | 'invoice' | 'refunded' | 'vat';

/**
 * A mixed workload of about `events` events over records numbered 0…n: customers and US invoices
 * with 1 to 3 versions each, US invoices refunded by half (the refund linked to them), and German
 * B2B invoices, paid, that are also VAT submissions (one version each: a VAT submission is never
 * resent), all to one buyer.
 * Sent in rounds (every first version, then every second, then every third), each round in a
 * fixed shuffled order, so refunds often arrive before their invoice is in the tax engine.
 */
export class Workload {
  readonly records: number;
  readonly events: ErpEvent[];

  constructor(
    readonly tag: string,
    events: number,
  ) {
    // 1.8 events per record on average (see shapeOf and versionsOf).
    this.records = Math.max(10, Math.round(events / 1.8));
    this.events = this.build();
  }

  shapeOf(i: number): Shape {
    return (['customer', 'customer', 'invoice', 'refunded', 'vat'] as const)[i % 5]!;
  }

  versionsOf(i: number): number {
    const shape = this.shapeOf(i);
    return shape === 'customer' || shape === 'invoice' ? 1 + (i % 3) : 1;
  }

  idOf(i: number): string {
    const prefix = { customer: 'C', invoice: 'INV', refunded: 'INV', vat: 'VAT' }[this.shapeOf(i)];
    return `${prefix}-${this.tag}-${i}`;
  }

  /** The one customer every German invoice names (upserted inline by each invoice's job). */
  get buyerId(): string {
    return `C-${this.tag}-buyer`;
  }

  refundIdOf(i: number): string {
    return `refund-RF-${this.tag}-${i}`;
  }

  priceOf(i: number, v: number): string {
    return `${10 + v}.${String(i % 100).padStart(2, '0')}`;
  }

  /** The last version's invoice total (two of each line), 2 decimals. */
  totalOf(i: number): string {
    return new Decimal(this.priceOf(i, this.versionsOf(i))).times(2).toFixed(2);
  }

  private eventsOf(i: number, v: number): ErpEvent[] {
    const id = this.idOf(i);
    const lines = [{ unit_price: this.priceOf(i, v), quantity: '2' }];
    switch (this.shapeOf(i)) {
      case 'customer':
        return [erpCustomer(id, v)];
      case 'invoice':
        return [erpInvoice(id, v, lines)];
      case 'refunded':
        return [erpInvoice(id, v, lines), erpRefund(this.refundIdOf(i), v + 1, id, this.priceOf(i, v))];
      case 'vat': {
        const de = { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' };
        return [
          erpInvoice(id, v, [{ ...lines[0]!, tax_rate: '0.19' }], {
            currency: 'EUR',
            status: 'paid',
            customer: { external_id: this.buyerId, name: 'Acme GmbH', tax_number: 'DE123456789' },
            addresses: { billing: de, shipping: de },
          }),
        ];
      }
    }
  }

  private build(): ErpEvent[] {
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const events: ErpEvent[] = [];
    for (let v = 1; v <= 3; v += 1) {
      const round = Array.from({ length: this.records }, (_, i) => i).filter((i) => this.versionsOf(i) >= v);
      for (let k = round.length - 1; k > 0; k -= 1) {
        const j = Math.floor(random() * (k + 1));
        [round[k], round[j]] = [round[j]!, round[k]!];
      }
      events.push(...round.flatMap((i) => this.eventsOf(i, v)));
    }
    return events;
  }

  private count(shape: Shape): number {
    return Array.from({ length: this.records }, (_, i) => i).filter((i) => this.shapeOf(i) === shape).length;
  }

  /**
   * What in the emulator differs from the last event sent for each record (empty when nothing):
   * customers by name, invoices by total, refunds linked to their invoice's id at exactly one half,
   * each VAT invoice accepted once with its net, and no record more than the workload has.
   */
  mismatches(emulator: Emulator): string[] {
    const wrong: string[] = [];
    const customers = new Map(emulator.state.customers.live().map((e) => [e.value.external_id, e.value]));
    const transactions = new Map(emulator.state.transactions.live().map((e) => [e.value.external_id, e.value]));
    const vat = new Map<string, { net: string }[]>();
    for (const { value } of emulator.state.vatTransactions.live()) vat.set(value.invoice_number, [...(vat.get(value.invoice_number) ?? []), value]);
    const totalOf = (external: string) => {
      const amounts = transactions.get(external)?.amounts as { total_items_amount?: string } | undefined;
      return amounts?.total_items_amount === undefined ? undefined : new Decimal(amounts.total_items_amount).toFixed(2);
    };
    for (let i = 0; i < this.records; i += 1) {
      const id = this.idOf(i);
      const shape = this.shapeOf(i);
      if (shape === 'customer') {
        const name = customers.get(id)?.name;
        if (name !== `${id} version ${this.versionsOf(i)}`) wrong.push(`${id}: name ${String(name)}`);
        continue;
      }
      if (totalOf(id) !== this.totalOf(i)) wrong.push(`${id}: total ${String(totalOf(id))} != ${this.totalOf(i)}`);
      if (shape === 'refunded') {
        const refund = transactions.get(this.refundIdOf(i));
        const fraction = refund?.refund_info?.refund_linked_percentage;
        if (
          refund?.transaction_type !== 'refund' ||
          refund.created_from !== transactions.get(id)?.id ||
          fraction === undefined ||
          !new Decimal(String(fraction)).eq('0.5')
        ) {
          wrong.push(`${this.refundIdOf(i)}: ${refund ? `${refund.transaction_type} from ${String(refund.created_from)} at ${String(fraction)}` : 'missing'}`);
        }
      }
      if (shape === 'vat') {
        const accepted = vat.get(id) ?? [];
        if (accepted.length !== 1 || !new Decimal(accepted[0]!.net).eq(this.totalOf(i))) {
          wrong.push(`${id}: accepted by the VAT service ${accepted.length} times (${accepted.map((a) => a.net).join(', ')})`);
        }
      }
    }
    const transactionCount = this.count('invoice') + 2 * this.count('refunded') + this.count('vat');
    // The German invoices' buyer is a customer too.
    const customerCount = this.count('customer') + (this.count('vat') > 0 ? 1 : 0);
    if (customers.size !== customerCount) wrong.push(`${customers.size} customers, not ${customerCount}`);
    if (transactions.size !== transactionCount) wrong.push(`${transactions.size} transactions, not ${transactionCount}`);
    const vatCount = emulator.state.vatTransactions.live().length;
    if (vatCount !== this.count('vat')) wrong.push(`${vatCount} VAT submissions accepted, not ${this.count('vat')}`);
    return wrong;
  }

  /** Waits until the emulator holds exactly the last state of every record (see mismatches). */
  async settled(emulator: Emulator, deadlineMs: number, context: () => string = () => ''): Promise<void> {
    // Every half second at most: with thousands of records a check is not free, and the daemon
    // under test may share this process.
    let checkedAt = 0;
    const check = () => {
      if (Date.now() - checkedAt < 500) return false;
      checkedAt = Date.now();
      return this.mismatches(emulator).length === 0;
    };
    await eventually(check, deadlineMs).catch(() => {
      const wrong = this.mismatches(emulator);
      throw new Error(`${wrong.length} records not at their last state: ${wrong.slice(0, 10).join('; ')}\n${context()}`);
    });
  }

  /** The record keys (as taxsync writes them) of an event: VAT-enabled transactions are two records. */
  private keysOf(event: ErpEvent): string[] {
    const key = recordKeyString(event.record);
    return event.record.kind === 'transaction' ? [key, recordKeyString({ ...event.record, kind: 'vat' })] : [key];
  }

  /**
   * Redis agrees: every record of the workload is applied at its newest version (the deadline
   * outlasts the 60 s refund lock a killed process may leave on an invoice), every event of
   * `acknowledged` is in its records' trace (stored with the 2xx that acknowledged it), and the
   * dead-letter queue is empty.
   */
  async expectStored(redis: Redis, prefix: string, acknowledged: readonly ErpEvent[], deadlineMs = 90_000): Promise<void> {
    const keys = createKeys(prefix);
    const records = createRecordStore(redis, keys);
    const unapplied = async () => {
      const out: string[] = [];
      for (const event of this.events) {
        const state = await records.read(event.record);
        if (state.seq === 0 || state.appliedSeq !== state.seq) out.push(`${event.record.external_id}: seq ${state.seq} applied ${state.appliedSeq}`);
      }
      return out;
    };
    await eventually(async () => (await unapplied()).length === 0, deadlineMs).catch(async () => {
      throw new Error(`records not applied: ${(await unapplied()).slice(0, 10).join('; ')}`);
    });
    const missing: string[] = [];
    for (const event of acknowledged) {
      for (const key of this.keysOf(event)) {
        const trace = await readTrace(redis, keys, key);
        if (!trace.some((t) => t.event_id === event.id)) missing.push(`${event.id} (${key})`);
      }
    }
    if (missing.length > 0) throw new Error(`acknowledged but not stored: ${missing.slice(0, 10).join(', ')}`);
    const queues = createQueues(redis, prefix);
    try {
      const deadLetters = createDeadLetterStore(queues['dead-letter']);
      const entries = await deadLetters.list({ limit: 5 });
      if (entries.length > 0) throw new Error(`dead letters: ${entries.map((e) => `${e.record ? e.record.external_id : '?'} ${e.error.code}: ${e.error.message}`).join('; ')}`);
    } finally {
      await closeQueues(queues);
    }
  }
}

export interface Post {
  batch: number;
  startedAt: number;
  answeredAt: number;
  /** The HTTP status, or 0 when the request failed (connection refused or reset). */
  status: number;
  body: string;
}

export interface FeedOptions {
  /** Where to post (asked before every POST, so a test can move the daemon). */
  url: () => string;
  events: readonly ErpEvent[];
  batch?: number;
  posters?: number;
  /** Whether a batch answered with this status (0: no answer) is posted again. @defaultValue never */
  retry?: (status: number) => boolean;
  /** Give up on a batch still refused this long after the feed started. */
  deadlineMs: number;
  /** Spread the batches over at least this long (each poster pauses between its posts), so deliveries keep coming while a test breaks things. @defaultValue 0 */
  spreadOverMs?: number;
}

export interface Feed {
  /** Every POST, in the order answered. */
  posts: Post[];
  /** Batches acknowledged so far (202, or 200 `duplicate` when a retry found it stored). */
  stored(): number;
  batches: number;
  /** The events acknowledged so far. */
  acknowledged(): ErpEvent[];
  /** Resolves when every batch is acknowledged; rejects on an answer that is neither that nor retried. */
  done: Promise<void>;
}

/**
 * Posts the events in signed ERP batches from several posters at once, like a platform: an
 * answer `retry` accepts is followed by the same batch again (same delivery id), a 202 means
 * stored, and so does a 200 `duplicate` to a retry (the first attempt's answer was lost).
 */
export function feed(options: FeedOptions): Feed {
  const size = options.batch ?? 10;
  const batches: ErpEvent[][] = [];
  for (let i = 0; i < options.events.length; i += size) batches.push(options.events.slice(i, i + size));
  const posts: Post[] = [];
  const acknowledged: number[] = [];
  const until = Date.now() + options.deadlineMs;
  const posters = options.posters ?? 4;
  const paceMs = ((options.spreadOverMs ?? 0) * posters) / Math.max(1, batches.length);
  let next = 0;
  const poster = async () => {
    for (let b = next++; b < batches.length; b = next++) {
      let retried = false;
      for (;;) {
        const startedAt = Date.now();
        let status = 0;
        let body = '';
        try {
          const res = await postSigned(options.url(), 'erp', batches[b]);
          status = res.status;
          body = await res.text();
        } catch (error) {
          body = String((error as Error).cause ?? error);
        }
        posts.push({ batch: b, startedAt, answeredAt: Date.now(), status, body });
        if (status === 202 || (status === 200 && retried && body.includes('"duplicate"'))) break;
        if (!(options.retry?.(status) ?? false)) throw new Error(`batch ${b} answered ${status}: ${body}`);
        if (Date.now() > until) throw new Error(`batch ${b} still refused at the deadline: ${status} ${body}`);
        retried = true;
        await new Promise((r) => setTimeout(r, 200));
      }
      acknowledged.push(b);
      if (paceMs > 0) await new Promise((r) => setTimeout(r, paceMs));
    }
  };
  const done = Promise.all(Array.from({ length: posters }, poster)).then(() => undefined);
  // Awaited by the test; until then a refused batch must not count as an unhandled rejection.
  done.catch(() => undefined);
  return {
    posts,
    stored: () => acknowledged.length,
    batches: batches.length,
    acknowledged: () => acknowledged.flatMap((b) => batches[b]!),
    done,
  };
}

/** Upserts of the tax engine in the emulator's request log. */
export function upserts(emulator: Emulator) {
  return emulator.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert' || e.endpoint === 'transactions.upsert');
}
