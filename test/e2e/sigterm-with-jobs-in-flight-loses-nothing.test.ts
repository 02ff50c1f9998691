import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type FaultRuleInput, type RequestLogEntry } from '../../src/emulator/index.js';
import { testVariety } from '../helpers/emulator-variety.js';
import { createKeys } from '../../src/queue/keys.js';
import { createRecordStore, type RecordStore } from '../../src/queue/record-state.js';
import { buildCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { e2eEnv, postSigned } from '../helpers/daemon.js';
import { erpCustomer, type ErpEvent } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { freePort } from '../helpers/redis-global-setup.js';
import { useRedis } from '../helpers/redis.js';

const RECORDS = 40;
const UPDATED_TWICE = 10;
const SLOW_MS = 8_000;

const customerKey = (i: number) => ({ kind: 'customer' as const, source: 'api', external_id: `C-TERM-${i}` });
const lastName = (i: number) => `C-TERM-${i} version ${i < UPDATED_TWICE ? 2 : 1}`;

describe('SIGTERM while jobs are in flight', () => {
  const ctx = useRedis();
  let main: string;
  let emulator: (Emulator & { url: string }) | undefined;
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    await emulator?.close();
    emulator = undefined;
  });

  /**
   * An emulator with `faults` and `taxsync start` against it (one customer job at a time per slot,
   * `concurrency` slots), with 50 events posted: 40 customers, 10 of them updated a second time.
   */
  async function scenario(options: { faults: FaultRuleInput[]; deadlineMs: number; concurrency: number }) {
    const running = await startEmulator({ port: 0, host: '127.0.0.1', faults: options.faults, variety: testVariety() });
    emulator = running;
    const port = await freePort();
    const env = {
      ...e2eEnv(ctx.url, ctx.prefix, running.url),
      TAXSYNC_HTTP_PORT: String(port),
      TAXSYNC_SHUTDOWN_DEADLINE_MS: String(options.deadlineMs),
      TAXSYNC_STALLED_INTERVAL_MS: '2000',
      TAXSYNC_CONCURRENCY_CUSTOMERS: String(options.concurrency),
      LOG_LEVEL: 'warn',
    };
    const start = async () => {
      const p = spawnCli(main, ['start'], env);
      processes.push(p);
      await p.waitFor('taxsync is running');
      return p;
    };
    const first = await start();
    const events: ErpEvent[] = [
      ...Array.from({ length: RECORDS }, (_, i) => erpCustomer(`C-TERM-${i}`, 1)),
      ...Array.from({ length: UPDATED_TWICE }, (_, i) => erpCustomer(`C-TERM-${i}`, 2)),
    ];
    for (let i = 0; i < events.length; i += 5) {
      const res = await postSigned(`http://127.0.0.1:${port}`, 'erp', events.slice(i, i + 5));
      expect(res.status, await res.clone().text()).toBe(202);
    }
    const records = createRecordStore(ctx.redis, createKeys(ctx.prefix));
    const upserts = () => running.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert');
    return { running, first, start, records, upserts };
  }

  /** Sends SIGTERM and answers the exit and how long it took. */
  async function terminate(p: CliProcess) {
    const signalledAt = Date.now();
    p.child.kill('SIGTERM');
    const exit = await p.exited;
    return { exit, tookMs: Date.now() - signalledAt };
  }

  const keyOf = (e: RequestLogEntry) => ({ kind: 'customer' as const, source: 'api', external_id: e.record!.key.replace('customer:api:', '') });

  /** The jobs of `requests` ran to their end: each answered and its record marked applied. */
  async function expectFinished(requests: readonly RequestLogEntry[], upserts: () => RequestLogEntry[], records: RecordStore) {
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      expect(upserts().find((e) => e.id === request.id)?.outcome, request.record?.key).toBe('answered');
      expect((await records.read(keyOf(request))).appliedSeq, request.record?.key).toBeGreaterThan(0);
    }
  }

  /** Every record ends in the emulator with its last state, and nothing is left to apply. */
  async function expectAllApplied(running: Emulator, records: RecordStore) {
    const names = () => new Map(running.state.customers.live().map((e) => [e.value.external_id, e.value.name]));
    await eventually(async () => {
      const held = names();
      if (!Array.from({ length: RECORDS }, (_, i) => held.get(`C-TERM-${i}`) === lastName(i)).every(Boolean)) return false;
      const states = await Promise.all(Array.from({ length: RECORDS }, (_, i) => records.read(customerKey(i))));
      return states.every((s) => s.seq > 0 && s.appliedSeq === s.seq);
    }, 25_000);
    expect(names().size).toBe(RECORDS);
  }

  it('lets the jobs in flight finish when they are short, then exits', async () => {
    const deadlineMs = 10_000;
    const { running, first, start, records, upserts } = await scenario({
      faults: [{ kind: 'latency', route: 'customers.upsert', ms: 300 }],
      deadlineMs,
      concurrency: 4,
    });
    let inFlight: RequestLogEntry[] = [];
    await eventually(() => {
      inFlight = upserts().filter((e) => e.outcome === 'in_flight');
      return inFlight.length > 0;
    });
    const { exit, tookMs } = await terminate(first);
    expect(exit, first.output()).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(deadlineMs);
    expect(first.output()).not.toContain('overran');
    await expectFinished(inFlight, upserts, records);

    // Nothing was cut off: the next process has no stalled job to recover, only the rest to do.
    const second = await start();
    await expectAllApplied(running, records);
    expect(second.output()).not.toContain('stalled job recovered');
    expect((await terminate(second)).exit).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('exits within its deadline when jobs run longer, and a restart completes every record with its last state', async () => {
    // Every customer upsert takes 200 ms; the first two answer only after 8 s, far past the
    // shutdown deadline (the change is made at once: the answer is what gets lost).
    const deadlineMs = 3_000;
    const { running, first, start, records, upserts } = await scenario({
      faults: [
        { kind: 'latency', route: 'customers.upsert', ms: 200 },
        { kind: 'latency', route: 'customers.upsert', ms: SLOW_MS, phase: 'after', times: 2 },
      ],
      deadlineMs,
      concurrency: 4,
    });

    // SIGTERM once both slow requests and at least one short one are in flight.
    const slow = (e: RequestLogEntry) => e.faults.length === 2;
    let shortInFlight: RequestLogEntry[] = [];
    await eventually(() => {
      const inFlight = upserts().filter((e) => e.outcome === 'in_flight');
      shortInFlight = inFlight.filter((e) => !slow(e));
      return inFlight.filter(slow).length === 2 && shortInFlight.length > 0;
    });
    const { exit, tookMs } = await terminate(first);
    expect(exit, first.output()).toEqual({ code: 0, signal: null });
    // Generous: the deadline bounds the shutdown, the rest is process teardown on a busy machine.
    expect(tookMs).toBeLessThan(deadlineMs + 10_000);
    expect(first.output()).toMatch(/"step":"workers".*shutdown step overran the deadline/);

    // The short jobs in flight at SIGTERM were allowed to finish; the slow ones were cut off.
    await expectFinished(shortInFlight, upserts, records);
    for (const request of upserts().filter(slow)) {
      const state = await records.read(keyOf(request));
      expect(state.appliedSeq, request.record?.key).toBeLessThan(state.seq);
    }

    // A new process takes everything left, the cut-off jobs through stalled-job recovery.
    const second = await start();
    await expectAllApplied(running, records);
    expect(second.output()).toContain('stalled job recovered');
    for (const request of upserts().filter(slow)) {
      const later = upserts().filter((e) => e.record?.key === request.record?.key && e.id > request.id);
      expect(later.some((e) => e.outcome === 'answered' && e.status === 200), request.record?.key).toBe(true);
    }
    expect((await terminate(second)).exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});
