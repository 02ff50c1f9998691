import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../../src/domain/events.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { mapInvoice } from '../../../src/mapping/index.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { readTrace } from '../../../src/queue/trace.js';
import { replayFindings } from '../../../src/reconcile/replay.js';
import { runReconcile, type ReconcileDeps } from '../../../src/reconcile/run.js';
import { buildCli, runCli } from '../../helpers/cli.js';
import { parseReportingPeriod, reconcile as reconcileVatLedger } from '../../../src/vat-ops/reconcile.js';
import { testVariety } from '../../helpers/emulator-variety.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19, `taxsync reconcile`: records go through the real pipeline into the emulator (answering
 * with its variety), then differences are planted in the engine behind taxsync's back — a
 * transaction deleted, an amount off by a cent, a refund unlinked, a record taxsync never sent —
 * and the report finds each of them, and nothing else.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const SHIP_TO = { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' };

function event(input: Omit<CanonicalEventInput, 'connector' | 'occurred_at' | 'id'> & { version: number }): CanonicalEvent {
  const { version, ...rest } = input;
  return CanonicalEvent.parse({ ...rest, id: `evt-${rest.record.external_id}-${version}`, connector: 'test', occurred_at: new Date(BASE + version * 1000).toISOString() });
}

const invoice = (id: string, lines: { unit_price: string; quantity: string; discount?: string }[]) =>
  event({
    version: 1,
    type: 'invoice.upserted',
    record: { kind: 'transaction', source: 'api', external_id: id },
    data: {
      number: id.toUpperCase(),
      issued_at: new Date(BASE).toISOString(),
      status: 'paid',
      currency: 'USD',
      tax_inclusive: false,
      addresses: { shipping: SHIP_TO },
      lines: lines.map((l, i) => ({ id: String(i + 1), name: `item ${i + 1}`, ...l })),
    },
  });

const refund = (id: string, invoiceId: string, amount: string) =>
  event({
    version: 2,
    type: 'refund.created',
    record: { kind: 'transaction', source: 'api', external_id: id },
    data: { invoice_external_id: invoiceId, issued_at: new Date(BASE + 3600_000).toISOString(), currency: 'USD', amount },
  });

const EVENTS = [
  event({ version: 1, type: 'customer.upserted', record: { kind: 'customer', source: 'api', external_id: 'cus-1' }, data: { name: 'Ada', addresses: { billing: SHIP_TO } } }),
  invoice('inv-1', [{ unit_price: '40.00', quantity: '2' }, { unit_price: '19.99', quantity: '1', discount: '5.00' }]),
  invoice('inv-2', [{ unit_price: '120.00', quantity: '1' }]),
  invoice('inv-3', [{ unit_price: '9.50', quantity: '3' }]),
  refund('refund-r-1', 'inv-1', '20.00'),
  refund('refund-r-2', 'inv-2', '60.00'),
];

describe('taxsync reconcile (pipeline + emulator + real Redis)', () => {
  const ctx = useRedis();
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let pipeline: Pipeline;
  let deps: ReconcileDeps;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1', variety: testVariety() });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    const refunds = createRefundLedger(pipeline.producerConnection, pipeline.keys);
    const settings = DEFAULT_SETTINGS.mapping;
    await pipeline.startWorker('transactions', createTransactionHandler({ tax: api.tax, records: pipeline.records, ledger: refunds, settings, writers: pipeline.writers }));
    await pipeline.startWorker('customers', createCustomerHandler({ tax: api.tax, settings, writers: pipeline.writers }));
    deps = { redis: pipeline.producerConnection, keys: pipeline.keys, records: pipeline.records, refunds, tax: api.tax, settings };
    await pipeline.producer.accept({ events: EVENTS });
    await settled();
  });

  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  async function settled(): Promise<void> {
    await eventually(async () => {
      for (const e of EVENTS) {
        const state = await pipeline.records.read(e.record);
        if (state.seq === 0 || state.appliedSeq < state.seq) return false;
      }
      return true;
    }, 60_000);
  }

  async function plant(): Promise<void> {
    // A transaction gone from the engine.
    await api.tax.transactions.deleteByKey('api', 'inv-3');
    // An amount off by a cent: the same invoice, one unit price 120.01.
    const inv2 = mapInvoice(EVENTS[2]!.type === 'invoice.upserted' ? EVENTS[2].data : (undefined as never), {
      key: EVENTS[2]!.record,
      settings: DEFAULT_SETTINGS.mapping,
    });
    if (inv2.kind !== 'send') throw new Error('inv-2 does not map');
    await api.tax.transactions.upsert({ ...inv2.body, items: [{ ...inv2.body.items![0]!, unit_price: '120.01' }] });
    // A refund unlinked from its invoice.
    const r2 = await api.tax.transactions.getByKey('api', 'refund-r-2');
    await api.tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-r-2',
      transaction_type: 'refund',
      transaction_status: 'active',
      transaction_date: new Date(BASE + 3600_000).toISOString(),
      currency_details: { currency: 'USD' },
      created_from: null,
      refund_info: { is_refund_linked: false },
      addresses: { shipping: SHIP_TO },
      items: [{ name: 'Refund', unit_price: '60.00', quantity: '1' }],
    });
    expect(r2.created_from).toBeTruthy();
    // A transaction taxsync never sent.
    await api.tax.transactions.upsert({
      source: 'api',
      external_id: 'ghost-1',
      transaction_type: 'invoice',
      transaction_status: 'active',
      transaction_date: new Date(BASE).toISOString(),
      currency_details: { currency: 'USD' },
      addresses: { shipping: SHIP_TO },
      items: [{ name: 'ghost', unit_price: '1.00', quantity: '1' }],
    });
  }

  const summaryOf = (findings: { kind: string; record: { external_id: string }; differences?: { field: string }[] }[]) =>
    findings.map((f) => `${f.kind} ${f.record.external_id}${f.differences ? ` ${f.differences.map((d) => d.field).join(',')}` : ''}`).sort();

  it('finds nothing when the engine holds what taxsync sent', async () => {
    const report = await runReconcile(deps, { pageSize: 2 });
    expect(report.findings).toEqual([]);
    expect(report.summary).toMatchObject({ compared: 6, matched: 6, missing: 0, extra: 0, differing: 0, pending: 0, engine_transactions: 5 });
    expect(report.matches).toBe(true);
  });

  it('finds a missing transaction, an amount off by a cent, an unlinked refund and an extra record, and nothing else', async () => {
    await plant();
    const report = await runReconcile(deps, { pageSize: 2 });
    expect(summaryOf(report.findings)).toEqual([
      'differing inv-2 items[0].unit_price',
      'differing refund-r-2 created_from,refund_info.is_refund_linked,refund_info.refund_linked_percentage',
      'extra ghost-1',
      'missing inv-3',
    ]);
    const cent = report.findings.find((f) => f.record.external_id === 'inv-2')!.differences![0]!;
    expect(cent).toEqual({ field: 'items[0].unit_price', taxsync: '120.00', engine: '120.01' });
    expect(report.summary).toMatchObject({ missing: 1, extra: 1, differing: 2, matched: 3 });
    expect(report.matches).toBe(false);
    // The summary metric's source: the last run's counts in the counters hash.
    const counters = await ctx.redis.hgetall(pipeline.keys.counters);
    expect(counters).toMatchObject({ 'reconcile:missing': '1', 'reconcile:extra': '1', 'reconcile:differing': '2' });
  });

  it('carries the VAT part in the same report: a VAT difference makes the whole report differ', async () => {
    const vatReport = reconcileVatLedger({
      period: parseReportingPeriod('2026-Q4'),
      entries: [],
      filing: { id: 'f-1', currency: 'EUR', boxes: { boxes: [{ box_number: '1', value: '19.00' }, { box_number: '2', value: '0' }, { box_number: '6', value: '100.00' }, { box_number: '7', value: '0' }, { box_number: '9', value: '1' }] } },
    });
    const report = await runReconcile({ ...deps, vat: () => Promise.resolve(vatReport) }, { pageSize: 2 });
    expect(report.findings).toEqual([]);
    expect(report.vat?.differences.map((d) => d.field)).toEqual(['count', 'net', 'vat']);
    expect(report.matches).toBe(false);
  });

  it('only compares the sources asked for, and records changed since the time given', async () => {
    await plant();
    const other = await runReconcile(deps, { pageSize: 2, sources: ['stripe'] });
    expect(other.findings).toEqual([]);
    expect(other.summary.compared).toBe(0);
    const later = await runReconcile(deps, { pageSize: 2, since: new Date(BASE + 2000) });
    // Only the refunds' events (version 2) are that recent; the ghost was written after `since` by the engine's clock.
    expect(summaryOf(later.findings)).toEqual([
      'differing refund-r-2 created_from,refund_info.is_refund_linked,refund_info.refund_linked_percentage',
      'extra ghost-1',
    ]);
  });

  it('resumes an interrupted run from its checkpoint', async () => {
    await plant();
    let pages = 0;
    const interrupted = runReconcile(
      {
        ...deps,
        onProgress: (phase) => {
          if (phase === 'transactions' && ++pages === 2) throw new Error('interrupted');
        },
      },
      { pageSize: 2 },
    );
    await expect(interrupted).rejects.toThrow('interrupted');
    const report = await runReconcile(deps, { pageSize: 2 });
    expect(report.resumed).toBe(true);
    expect(summaryOf(report.findings)).toHaveLength(4);
    expect(report.summary.engine_transactions).toBe(5);
    // A finished run leaves no checkpoint: the next one starts afresh.
    expect((await runReconcile(deps, { pageSize: 2 })).resumed).toBe(false);
  });

  it('replays the mismatches from the latest state, after which only the record taxsync never held remains', async () => {
    await plant();
    const report = await runReconcile(deps, { pageSize: 2 });
    const audit = createAuditLog(pipeline.producerConnection, pipeline.keys, { actor: 'tester' });
    const results = await replayFindings({ queues: pipeline.queues, keys: pipeline.keys, audit, trace: { maxEntries: 50, maxAgeMs: 600_000 } }, report);
    expect(results.map((r) => `${r.outcome} ${r.finding.record.external_id}`).sort()).toEqual(['queued inv-2', 'queued inv-3', 'queued refund-r-2', 'skipped ghost-1']);
    await settled();
    const trace = await readTrace(pipeline.producerConnection, pipeline.keys, 'transaction|api|inv-2');
    expect(trace.some((t) => t.step === 'replayed' && t.detail?.includes('reconcile'))).toBe(true);
    // Audited like every operator resend, naming the run.
    const audited = await audit.list(10);
    expect(audited.filter((a) => a.action === 'resend' && a.actor === 'tester' && a.outcome?.includes(`reconcile ${report.run_id}`))).toHaveLength(3);
    await eventually(async () => summaryOf((await runReconcile(deps, { pageSize: 2 })).findings).join() === 'extra ghost-1', 60_000);
  });

  it("counts customers sent inline with an invoice as taxsync's, also after the invoice was cancelled or deleted; a stranger is extra", async () => {
    // Such a customer has no record of its own: the invoice's job sent it (customerFirst).
    const withCustomer = (id: string, customer: string) => {
      const e = invoice(id, [{ unit_price: '25.00', quantity: '2' }]);
      if (e.type !== 'invoice.upserted') throw new Error('not an invoice');
      return CanonicalEvent.parse({ ...e, data: { ...e.data, customer: { external_id: customer, name: `Customer of ${id}`, tax_exempt: true, addresses: { billing: SHIP_TO } } } });
    };
    const later = (type: 'invoice.cancelled' | 'invoice.deleted', id: string) => event({ version: 2, type, record: { kind: 'transaction', source: 'api', external_id: id }, data: {} });
    const settle = async (events: CanonicalEvent[]) => {
      await pipeline.producer.accept({ events });
      await eventually(async () => (await Promise.all(events.map((e) => pipeline.records.read(e.record)))).every((s) => s.seq > 0 && s.appliedSeq >= s.seq), 30_000);
    };
    await settle([withCustomer('inv-kept', 'cus-kept'), withCustomer('inv-cancelled', 'cus-cancelled'), withCustomer('inv-deleted', 'cus-deleted')]);
    for (const id of ['cus-kept', 'cus-cancelled', 'cus-deleted']) expect((await api.tax.customers.getByKey('api', id)).customer_type).toBe('retail_exempt');
    await settle([later('invoice.cancelled', 'inv-cancelled'), later('invoice.deleted', 'inv-deleted')]);
    await api.tax.customers.upsert({ source: 'api', external_id: 'cus-stranger', name: 'Nobody taxsync knows', customer_type: 'retail' });

    const report = await runReconcile(deps, { pageSize: 2 });
    expect(report.findings.map((f) => `${f.kind} ${f.record.kind} ${f.record.external_id}`)).toEqual(['extra customer cus-stranger']);
  });

  describe('the command', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    const cli = (args: string[]) =>
      runCli(main, args, {
        REDIS_URL: ctx.url,
        TAXSYNC_PREFIX: ctx.prefix,
        TAX_API_URL: emulator.url,
        TAX_API_CLIENT_ID: DEFAULT_CLIENT.clientId,
        TAX_API_CLIENT_SECRET: DEFAULT_CLIENT.clientSecret,
        LOG_LEVEL: 'error',
      });

    it('prints the report (exit 2 on findings) and replays it from the file in one command', async () => {
      await plant();
      const json = await cli(['reconcile', '--json']);
      expect(json.code, json.stdout).toBe(2);
      const report = JSON.parse(json.stdout) as { findings: { kind: string; record: { external_id: string } }[] };
      expect(summaryOf(report.findings)).toHaveLength(4);
      const text = await cli(['reconcile', '--source', 'api']);
      expect(text.stdout).toContain('MISSING   transaction api/inv-3');
      expect(text.stdout).toContain('items[0].unit_price: taxsync 120.00, engine 120.01');
      const file = join(mkdtempSync(join(tmpdir(), 'taxsync-reconcile-')), 'report.json');
      writeFileSync(file, json.stdout);
      const replayed = await cli(['reconcile', 'replay', file, '--json']);
      expect(replayed.code, replayed.stdout).toBe(0);
      expect((JSON.parse(replayed.stdout) as { outcome: string }[]).map((r) => r.outcome).sort()).toEqual(['queued', 'queued', 'queued', 'skipped']);
    });
  });
});
