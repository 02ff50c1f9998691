import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.js';
import { Settings } from '../../src/config/settings.js';
import { createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createProducer } from '../../src/queue/producer.js';
import { createKeys } from '../../src/queue/keys.js';
import { readTrace } from '../../src/queue/trace.js';
import { freePort } from '../../src/daemon/redis-probe.js';
import { guardSources } from '../../src/daemon/guard.js';
import { connectionsOf, loadConnections } from '../../src/config/connections.js';
import { ingestFile } from '../../src/ingest/file.js';
import { createLifecycle } from '../../src/daemon/lifecycle.js';
import { createLogger } from '../../src/observability/logger.js';
import { replayEntries, selectEntries, statusReport } from '../../src/dead-letters/service.js';
import { openDlq } from '../../src/cli/open-dlq.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer, erpInvoice, erpRefund } from '../helpers/erp-events.js';
import { customerEvent, eventually } from '../helpers/pipeline.js';
import { startLocalCluster, type LocalCluster } from '../helpers/redis-cluster.js';
import { ENTITY } from '../unit/emulator/helpers.js';

/** Every line the daemons log, at info and above. */
const logLines: string[] = [];
const logSink = () =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });

const VAT_SETTINGS = Settings.parse({
  vat: { seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }], rates: { DE: { standard: '19.00' } } },
});

// Two installations, each under its own hash tag, on two masters that are not the seed node the
// clients are given: every command is routed through the cluster's slot map.
describe('taxsync on a 3-master Redis Cluster', () => {
  let cluster: LocalCluster;
  let seedUrl: string;
  let tax: Daemon;
  let vat: Daemon;

  /** A fresh hash-tag prefix whose slot the master on `port` owns. */
  async function prefixOn(port: number, name: string): Promise<string> {
    for (;;) {
      const prefix = `{taxsync-${name}-${randomUUID().slice(0, 8)}}`;
      if ((await cluster.ownerOf(`${prefix}:probe`)) === port) return prefix;
    }
  }

  beforeAll(async () => {
    cluster = await startLocalCluster(3);
    const [seed, first, second] = cluster.ports as [number, number, number];
    seedUrl = `redis://127.0.0.1:${seed}`;
    const env = { REDIS_CLUSTER: '1', LOG_LEVEL: 'info', TAXSYNC_COALESCE_MS: '2500' };
    tax = await startDaemon(seedUrl, await prefixOn(first, 'tax'), { env, logDestination: logSink() });
    vat = await startDaemon(seedUrl, await prefixOn(second, 'vat'), {
      env,
      logDestination: logSink(),
      settings: VAT_SETTINGS,
      emulator: { entities: [{ id: ENTITY, name: 'Beta GmbH' }] },
    });
  }, 60_000);

  afterAll(async () => {
    await tax?.stop();
    await vat?.stop();
    await cluster?.stop();
  });

  /** The dead-letter tools of `taxsync dlq …` for one installation (connecting as the CLI does). */
  const dlqOf = (daemon: Daemon, settings: Settings) => {
    const logger = createLogger({ level: 'silent' });
    return openDlq({ config: daemon.config, settings, connections: loadConnections(daemon.config, settings), logger, lifecycle: createLifecycle({ logger, deadlineMs: 10_000 }) }, { actor: 'cluster-test' });
  };
  const sends = (daemon: Daemon, endpoint: string, key: string) =>
    daemon.emulator.requestLog.entries().filter((e) => e.endpoint === endpoint && e.record?.key === key);
  const transaction = (id: string) => tax.api.tax.transactions.getByKey('api', id).catch(() => undefined);

  it('coalesces a burst of updates of one customer into at most two calls, the last version winning', async () => {
    const versions = Array.from({ length: 20 }, (_, i) => erpCustomer('C-BURST', i + 1));
    const answers = await Promise.all(versions.map((event) => tax.post('erp', event)));
    expect(answers.map((r) => r.status)).toEqual(versions.map(() => 202));

    await eventually(async () => (await tax.api.tax.customers.getByKey('api', 'C-BURST').catch(() => undefined))?.name === 'C-BURST version 20', 30_000);
    await eventually(() => tax.idle(), 30_000);
    expect(sends(tax, 'customers.upsert', 'customer:api:C-BURST').length).toBeLessThanOrEqual(2);
  });

  it('links refunds through the refund ledger, dead-letters the one the engine refuses and replays it', async () => {
    expect((await tax.post('erp', erpInvoice('INV-CL', 1, [{ unit_price: '100.00', quantity: '2' }]))).status).toBe(202);
    await eventually(async () => (await transaction('INV-CL')) !== undefined, 30_000);
    const invoice = (await transaction('INV-CL'))!;

    expect((await tax.post('erp', erpRefund('refund-CL-1', 2, 'INV-CL', '50.00'))).status).toBe(202);
    await eventually(async () => (await transaction('refund-CL-1')) !== undefined, 30_000);
    expect(await transaction('refund-CL-1')).toMatchObject({
      created_from: invoice.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.25' },
    });

    // 60 % refunded in the engine behind taxsync's back: the ledger lets a 50 % refund through
    // (0.25 + 0.5), the engine refuses it (0.25 + 0.6 + 0.5 > 1).
    await tax.api.tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-manual-CL',
      transaction_type: 'refund',
      created_from: invoice.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.6' },
      items: [{ unit_price: '120.00' }],
    });
    expect((await tax.post('erp', erpRefund('refund-CL-2', 3, 'INV-CL', '100.00'))).status).toBe(202);

    const dlq = await dlqOf(tax, Settings.parse({}));
    try {
      await eventually(async () => (await dlq.deps.deadLetters.count()) === 1, 30_000);
      const entries = await selectEntries(dlq.deps, {});
      expect(entries[0]).toMatchObject({ record: { external_id: 'refund-CL-2' }, error: { code: 'API_INVALID' } });
      await eventually(() => tax.idle(), 30_000);
      expect(await statusReport(dlq.deps)).toMatchObject({ dead_letter: { total: 1 } });

      // The operator removes the manual refund and replays the entry: it goes through this time.
      await tax.api.tax.transactions.deleteByKey('api', 'refund-manual-CL');
      const replay = await replayEntries(dlq.deps, entries, { actor: 'cluster-test', selection: { ids: entries.map((e) => e.id) } });
      expect(replay.counts.replayed).toBe(1);
      await eventually(async () => (await transaction('refund-CL-2')) !== undefined, 30_000);
      expect(await transaction('refund-CL-2')).toMatchObject({
        created_from: invoice.id,
        refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' },
      });
      expect(await dlq.deps.deadLetters.count()).toBe(0);
      expect((await dlq.deps.audit.list()).map((line) => line.action)).toContain('replay');
      await eventually(() => tax.idle(), 30_000);
      const status = await statusReport(dlq.deps);
      expect(status.dead_letter).toMatchObject({ total: 0 });
      expect(Object.values(status.queues).every((q) => q.waiting === 0 && q.active === 0 && q.delayed === 0)).toBe(true);
    } finally {
      await dlq.close();
    }

    expect((await fetch(`${tax.webhookUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${tax.webhookUrl}/metrics`)).text();
    expect(metrics).toMatch(/^taxsync_dead_letter_entries 0$/m);
  });

  it('submits a VAT invoice once through the VAT ledger', async () => {
    await vat.api.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY, registration_type: 'standard', date_of_registration: '2024-01-01' });
    const invoice = {
      id: 'erp-INV-VAT-1-v1',
      type: 'invoice.upserted',
      occurred_at: '2025-03-02T10:00:00Z',
      record: { kind: 'transaction', source: 'api', external_id: 'INV-VAT-1' },
      data: {
        number: 'INV-VAT-1',
        issued_at: '2025-03-02T10:00:00+01:00',
        status: 'active',
        currency: 'EUR',
        tax_inclusive: false,
        customer: { external_id: 'C-VAT', name: 'Acme GmbH', tax_number: 'DE123456789' },
        addresses: { billing: { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' } },
        lines: [{ id: '1', name: 'widget', unit_price: '100.00', quantity: '1', tax_rate: '0.19' }],
      },
    };
    expect((await vat.post('erp', invoice)).status).toBe(202);
    await eventually(() => [...vat.emulator.state.vatTransactions.live()].some(({ value }) => value.invoice_number === 'INV-VAT-1'), 30_000);
    await eventually(async () => (await vat.queues['vat-submissions'].getJobCounts('waiting', 'active', 'delayed')).active === 0, 30_000);
    expect([...vat.emulator.state.vatTransactions.live()].filter(({ value }) => value.invoice_number === 'INV-VAT-1')).toHaveLength(1);
    const dlq = await dlqOf(vat, VAT_SETTINGS);
    try {
      const ledger: string[] = [];
      for await (const [, entry] of dlq.deps.ledger.entries()) ledger.push(entry.state);
      expect(ledger).toEqual(['confirmed']);
      expect((await statusReport(dlq.deps)).vat_ledger).toEqual({ unknown: 0, unresolved: 0, in_flight: 0, pending: 0, attention: 0 });
    } finally {
      await dlq.close();
    }
  });

  it('backfills a file with its checkpoint, keeps traces and guards the sources', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-cluster-ingest-'));
    const file = join(dir, 'customers.jsonl');
    writeFileSync(file, [1, 2, 3].map((n) => JSON.stringify(erpCustomer(`C-FILE-${n}`, 1))).join('\n'));
    const seed = { clusterSeed: seedUrl };
    const redis = createRedis(seed, 'worker');
    const dlq = await dlqOf(tax, Settings.parse({}));
    try {
      const keys = createKeys(tax.config.redis.prefix);
      const first = await ingestFile({ file, keys, redis, source: 'api', producer: dlq.deps.producer, batchSize: 2 });
      expect(first).toMatchObject({ lines: 3, queued: 3, invalid: 0 });
      // The checkpoint was committed with the last batch: a second run has nothing left to read.
      expect(await ingestFile({ file, keys, redis, source: 'api', producer: dlq.deps.producer })).toMatchObject({ resumedAfter: 3, queued: 0 });
      await eventually(async () => (await tax.api.tax.customers.getByKey('api', 'C-FILE-3').catch(() => undefined)) !== undefined, 30_000);

      const trace = await readTrace(redis, keys, 'customer|api|C-BURST');
      expect(trace.map((e) => e.step)).toContain('received');

      const withSecret = (settings: Settings) => connectionsOf(loadConnections(tax.config, settings).list.map((c) => (c.id === 'erp' ? { ...c, webhookSecrets: [new Secret('x')] } : c)));
      expect(await guardSources(tax.config, withSecret(Settings.parse({})), seed, false)).toEqual([]);
      await expect(guardSources(tax.config, withSecret(Settings.parse({ sources: { erp: 'netsuite' } })), seed, false)).rejects.toThrow(/source of a connection changed/);
    } finally {
      await dlq.close();
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails fast, storing nothing, when the producer cannot reach the cluster', async () => {
    const down = createRedis({ clusterSeed: `redis://127.0.0.1:${await freePort()}` }, 'producer');
    down.on('error', () => {});
    const prefix = '{taxsync-down}';
    const queues = createQueues(down, prefix);
    const producer = createProducer({
      queues,
      connection: down,
      keys: createKeys(prefix),
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    const started = Date.now();
    await expect(producer.accept({ events: [customerEvent(1)] })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(5_000);
    down.disconnect();
  });

  it('logged no CROSSSLOT error, nor any other Redis or unexpected error', () => {
    expect(logLines.length).toBeGreaterThan(0);
    // ioredis refuses a MULTI across slots itself ("…should belong to the same slot"); Redis says CROSSSLOT.
    expect(logLines.filter((line) => /CROSSSLOT|same slot|\bMOVED\b|\bASK\b|CLUSTERDOWN|TRYAGAIN|INTERNAL_ERROR|redis connection error|not stored/.test(line))).toEqual([]);
    // Drift (an answer that differs from the contract, read anyway) is the emulator's, not Redis's: it is not what this looks for.
    const warnings = logLines
      .map((line) => JSON.parse(line) as { level: number; msg: string; external_id?: string })
      .filter((l) => l.level >= 40 && !l.msg.startsWith('response drift: '));
    expect(warnings.map((l) => `${l.msg} ${l.external_id}`)).toEqual(['dead-lettered refund-CL-2']);
  });
});
