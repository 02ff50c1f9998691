import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import type { Connection } from '../../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { mapInvoice } from '../../../src/mapping/index.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import type { Finding } from '../../../src/reconcile/compare.js';
import { renderReport } from '../../../src/reconcile/report.js';
import { reconcileRunId, runReconcile, type ReconcileDeps } from '../../../src/reconcile/run.js';
import { reconcileConnection } from '../../../src/reconcile/scope.js';
import { buildCli, runCli } from '../../helpers/cli.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';
import { twoShops } from '../../helpers/two-shops.js';

/**
 * Two WooCommerce shops write the same source, and number their orders alike: shop-de as the
 * platform gives them, shop-fr with 'fr-' in front. `taxsync reconcile --connection <id>` compares
 * only that shop's records, in taxsync's latest state and in the engine's lists: a difference
 * planted in one shop's records (an order off by a cent, an order gone from the engine, an order
 * the engine holds that taxsync never sent) is reported for that shop and never for the other.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const SHIP_TO = { street: 'Hauptstr. 5', city: 'München', zip: '80331', country: 'DE' };

function order(connection: Connection, number: string, unitPrice: string): CanonicalEvent {
  const externalId = connection.externalIdPrefix + number;
  return CanonicalEvent.parse({
    id: `evt-${connection.id}-${number}`,
    type: 'invoice.upserted',
    occurred_at: new Date(BASE).toISOString(),
    connector: connection.id,
    record: { kind: 'transaction', source: connection.source, external_id: externalId },
    data: { number, issued_at: new Date(BASE).toISOString(), status: 'paid', currency: 'EUR', tax_inclusive: false, addresses: { shipping: SHIP_TO }, lines: [{ id: '1', name: 'Teapot', unit_price: unitPrice, quantity: '1' }] },
  });
}

const customer = (connection: Connection, id: string) =>
  CanonicalEvent.parse({
    id: `evt-${connection.id}-${id}`,
    type: 'customer.upserted',
    occurred_at: new Date(BASE).toISOString(),
    connector: connection.id,
    record: { kind: 'customer', source: connection.source, external_id: connection.externalIdPrefix + id },
    data: { name: `Customer ${id}`, addresses: { billing: SHIP_TO } },
  });

describe('reconcile one connection of a source two shops share (pipeline + emulator + real Redis)', () => {
  const ctx = useRedis();
  const shops = twoShops();
  const de = shops.connections.get('shop-de')!;
  const fr = shops.connections.get('shop-fr')!;
  const EVENTS = [order(de, '1001', '100.00'), order(de, '1002', '50.00'), customer(de, 'c-1'), order(fr, '1001', '80.00'), order(fr, '1002', '40.00'), customer(fr, 'c-1')];
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let pipeline: Pipeline;
  let deps: ReconcileDeps;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    const refunds = createRefundLedger(pipeline.producerConnection, pipeline.keys);
    const settings = DEFAULT_SETTINGS.mapping;
    await pipeline.startWorker('transactions', createTransactionHandler({ tax: api.tax, records: pipeline.records, ledger: refunds, settings, writers: pipeline.writers }));
    await pipeline.startWorker('customers', createCustomerHandler({ tax: api.tax, settings, writers: pipeline.writers }));
    deps = { redis: pipeline.producerConnection, keys: pipeline.keys, records: pipeline.records, refunds, tax: api.tax, settings };
    await pipeline.producer.accept({ events: EVENTS });
    await eventually(async () => (await Promise.all(EVENTS.map((e) => pipeline.records.read(e.record)))).every((s) => s.seq > 0 && s.appliedSeq >= s.seq), 60_000);
  });

  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  /** shop-de: order 1002 off by a cent, and an order the engine holds that it never sent; shop-fr: order fr-1001 gone from the engine, and one it never sent. */
  async function plant(): Promise<void> {
    const e = EVENTS[1]!;
    const mapped = mapInvoice(e.type === 'invoice.upserted' ? e.data : (undefined as never), { key: e.record, settings: DEFAULT_SETTINGS.mapping });
    if (mapped.kind !== 'send') throw new Error('1002 does not map');
    await api.tax.transactions.upsert({ ...mapped.body, items: [{ ...mapped.body.items![0]!, unit_price: '50.01' }] });
    await api.tax.transactions.deleteByKey('woocommerce', 'fr-1001');
    for (const ghost of ['2001', 'fr-2001']) {
      await api.tax.transactions.upsert({
        source: 'woocommerce',
        external_id: ghost,
        transaction_type: 'invoice',
        transaction_status: 'active',
        transaction_date: new Date(BASE).toISOString(),
        currency_details: { currency: 'EUR' },
        addresses: { shipping: SHIP_TO },
        items: [{ name: 'ghost', unit_price: '1.00', quantity: '1' }],
      });
    }
  }

  const summaryOf = (findings: Finding[]) => findings.map((f) => `${f.kind} ${f.record.external_id}`).sort();
  const scope = (connection: Connection) => reconcileConnection(shops.connections, connection);

  it("reports each shop's planted differences for that shop only", async () => {
    await plant();
    const forFr = await runReconcile(deps, { pageSize: 2, connection: scope(fr) });
    expect(summaryOf(forFr.findings)).toEqual(['extra fr-2001', 'missing fr-1001']);
    expect(forFr.summary).toMatchObject({ compared: 3, matched: 2, missing: 1, differing: 0, extra: 1, engine_transactions: 2, engine_customers: 1 });
    expect(forFr.connection).toEqual({ id: 'shop-fr', external_id_prefix: 'fr-' });
    expect(forFr.sources).toEqual(['woocommerce']);
    expect(renderReport(forFr).split('\n')[0]).toBe('reconcile all records (connection shop-fr: source woocommerce, prefix fr-)');

    const forDe = await runReconcile(deps, { pageSize: 2, connection: scope(de) });
    expect(summaryOf(forDe.findings)).toEqual(['differing 1002', 'extra 2001']);
    expect(forDe.summary).toMatchObject({ compared: 3, matched: 2, missing: 0, differing: 1, extra: 1, engine_transactions: 3 });
    expect(renderReport(forDe).split('\n')[0]).toBe('reconcile all records (connection shop-de: source woocommerce)');
  });

  it("leaves the installation's last whole run's counts (/metrics, status) as they were after a run of one connection or one source", async () => {
    await plant();
    const whole = await runReconcile(deps, { pageSize: 2 });
    const counters = async () => (await ctx.redis.hmget(`${ctx.prefix}:counters`, 'reconcile:missing', 'reconcile:extra', 'reconcile:differing', 'reconcile:finished_at_ms')).join(' ');
    const after = await counters();
    expect(after).toBe(`${whole.summary.missing} ${whole.summary.extra} ${whole.summary.differing} ${Date.parse(whole.finished_at)}`);
    expect((await runReconcile(deps, { pageSize: 2, connection: scope(de) })).summary.missing).toBe(0);
    await runReconcile(deps, { pageSize: 2, sources: ['woocommerce'] });
    expect(await counters()).toBe(after);
  });

  it('finds nothing for a shop whose records match while the other shop differs', async () => {
    await api.tax.transactions.deleteByKey('woocommerce', 'fr-1002');
    expect((await runReconcile(deps, { pageSize: 2, connection: scope(de) })).matches).toBe(true);
    expect(summaryOf((await runReconcile(deps, { pageSize: 2, connection: scope(fr) })).findings)).toEqual(['missing fr-1002']);
  });

  it('keeps --source comparing every record of the source, both shops together, and names each connection its own run', async () => {
    await plant();
    const all = await runReconcile(deps, { pageSize: 2, sources: ['woocommerce'] });
    expect(summaryOf(all.findings)).toEqual(['differing 1002', 'extra 2001', 'extra fr-2001', 'missing fr-1001']);
    expect(all.connection).toBeUndefined();
    const ids = new Set([reconcileRunId({}), reconcileRunId({ connection: scope(de) }), reconcileRunId({ connection: scope(fr) })]);
    expect(ids.size).toBe(3);
  });

  it("looks for extras in the source of a connection with a prefix that the source-change guard remembers as '<source> <prefix>'", async () => {
    // A Stripe account with a prefix taxsync holds no record of yet: only the guard knows it writes 'stripe'.
    await ctx.redis.hset(pipeline.keys.sources, { 'stripe-eu': 'stripe eu-' });
    await api.tax.transactions.upsert({
      source: 'stripe',
      external_id: 'eu-in_1',
      transaction_type: 'invoice',
      transaction_status: 'active',
      transaction_date: new Date(BASE).toISOString(),
      currency_details: { currency: 'EUR' },
      addresses: { shipping: SHIP_TO },
      items: [{ name: 'ghost', unit_price: '1.00', quantity: '1' }],
    });
    expect(summaryOf((await runReconcile(deps, { pageSize: 2 })).findings)).toEqual(['extra eu-in_1']);
  });

  describe('the command', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    const cli = (args: string[]) =>
      runCli(main, args, {
        ...shops.env,
        REDIS_URL: ctx.url,
        TAXSYNC_PREFIX: ctx.prefix,
        TAX_API_URL: emulator.url,
        TAX_API_CLIENT_ID: DEFAULT_CLIENT.clientId,
        TAX_API_CLIENT_SECRET: DEFAULT_CLIENT.clientSecret,
        LOG_LEVEL: 'error',
      });

    it('reconciles --connection shop-fr alone, names it, and refuses an unknown connection or one given with --source', async () => {
      await plant();
      const text = await cli(['reconcile', '--connection', 'shop-fr']);
      expect(text.code, text.output).toBe(2);
      expect(text.stdout).toContain('(connection shop-fr: source woocommerce, prefix fr-)');
      expect(text.stdout).toContain('MISSING   transaction woocommerce/fr-1001');
      expect(text.stdout).toContain('EXTRA     transaction woocommerce/fr-2001');
      expect(text.stdout).not.toMatch(/woocommerce\/(1002|2001)\b/);
      const json = JSON.parse((await cli(['reconcile', '--connection', 'shop-de', '--json'])).stdout) as { connection: unknown; findings: Finding[] };
      expect(json.connection).toEqual({ id: 'shop-de', external_id_prefix: '' });
      expect(summaryOf(json.findings)).toEqual(['differing 1002', 'extra 2001']);

      const unknown = await cli(['reconcile', '--connection', 'shop-it']);
      expect(unknown.code).not.toBe(0);
      expect(unknown.output).toContain('no connection "shop-it"');
      const both = await cli(['reconcile', '--connection', 'shop-fr', '--source', 'woocommerce']);
      expect(both.code).not.toBe(0);
      expect(both.output).toContain('--connection and --source');
    }, 60_000);
  });
});
