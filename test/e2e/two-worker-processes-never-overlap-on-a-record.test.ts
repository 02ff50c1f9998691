import { Decimal } from 'decimal.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT, type RequestLogEntry } from '../../src/emulator/index.js';
import { buildCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { e2eEnv, startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer, erpInvoice, type ErpEvent } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const CUSTOMERS = ['C-PAR-1', 'C-PAR-2', 'C-PAR-3', 'C-PAR-4'];
const INVOICES = ['INV-PAR-1', 'INV-PAR-2', 'INV-PAR-3', 'INV-PAR-4'];
const UPDATES = 10;
const WORKERS = [
  { clientId: 'worker-a', clientSecret: 'worker-a-secret' },
  { clientId: 'worker-b', clientSecret: 'worker-b-secret' },
];
const priceOf = (version: number) => `${version}.99`;

describe('two `taxsync work` processes on one Redis', () => {
  const ctx = useRedis();
  let main: string;
  let daemon: Daemon | undefined;
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    await daemon?.stop();
    daemon = undefined;
  });

  it('never send one record twice at once, and every record ends with its last update', async () => {
    // Webhooks in this process; the workers are two child processes, each with its own API client
    // so the emulator's request log tells them apart, running one job per queue at a time. Every
    // upsert takes 100 ms.
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      work: false,
      emulator: {
        clients: [DEFAULT_CLIENT, ...WORKERS],
        faults: [
          { kind: 'latency', route: 'customers.upsert', ms: 100 },
          { kind: 'latency', route: 'transactions.upsert', ms: 100 },
        ],
      },
    });
    const running = daemon;
    for (const client of WORKERS) {
      const worker = spawnCli(main, ['work'], {
        ...e2eEnv(ctx.url, ctx.prefix, running.emulator.url),
        TAX_API_CLIENT_ID: client.clientId,
        TAX_API_CLIENT_SECRET: client.clientSecret,
        TAXSYNC_CONCURRENCY_CUSTOMERS: '1',
        TAXSYNC_CONCURRENCY_TRANSACTIONS: '1',
        LOG_LEVEL: 'info',
      });
      processes.push(worker);
    }
    await Promise.all(processes.map((p) => p.waitFor('"msg":"workers started"')));

    // Every delivery updates all eight records. Some arrive while the records' jobs run, some
    // after they finished (so a record's next job may go to the other process).
    for (let version = 1; version <= UPDATES; version++) {
      if (version > 1) await new Promise((r) => setTimeout(r, version % 3 === 0 ? 150 : 20));
      const events: ErpEvent[] = [
        ...CUSTOMERS.map((id) => erpCustomer(id, version)),
        ...INVOICES.map((id) => erpInvoice(id, version, [{ unit_price: priceOf(version), quantity: '2' }])),
      ];
      const res = await running.post('erp', events);
      expect(res.status, await res.clone().text()).toBe(202);
    }

    const names = () => new Map(running.emulator.state.customers.live().map((e) => [e.value.external_id, e.value.name]));
    const prices = () => new Map(running.emulator.state.transactions.live().map((e) => [e.value.external_id, (e.value.items as { unit_price: string }[])[0]?.unit_price]));
    await eventually(async () => {
      const n = names();
      const p = prices();
      return (
        CUSTOMERS.every((id) => n.get(id) === `${id} version ${UPDATES}`) &&
        INVOICES.every((id) => p.get(id) !== undefined && new Decimal(p.get(id)!).eq(priceOf(UPDATES))) &&
        (await running.idle())
      );
    }, 25_000);

    const upserts = running.emulator.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert' || e.endpoint === 'transactions.upsert');
    expect(upserts.every((e) => e.outcome === 'answered' && (e.status === 200 || e.status === 201))).toBe(true);
    // Both processes did work (with one job at a time each, the second record of a delivery can
    // only go to the other process)…
    expect(new Set(upserts.map((e) => e.client_id))).toEqual(new Set(WORKERS.map((w) => w.clientId)));

    // …and never on one record at once: per record, each request starts after the previous ended.
    const byRecord = new Map<string, RequestLogEntry[]>();
    for (const e of upserts) byRecord.set(e.record!.key, [...(byRecord.get(e.record!.key) ?? []), e]);
    expect(byRecord.size).toBe(CUSTOMERS.length + INVOICES.length);
    for (const [key, requests] of byRecord) {
      const sorted = [...requests].sort((a, b) => a.start_ms - b.start_ms);
      for (let i = 1; i < sorted.length; i++) {
        expect(sorted[i]!.start_ms, `${key}: request ${sorted[i]!.id} overlaps ${sorted[i - 1]!.id}`).toBeGreaterThanOrEqual(sorted[i - 1]!.end_ms!);
      }
      // A burst collapses: never more calls than updates.
      expect(requests.length, key).toBeLessThanOrEqual(UPDATES);
    }
  });
});
