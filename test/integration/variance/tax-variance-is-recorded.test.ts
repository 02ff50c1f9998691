import { Decimal } from 'decimal.js';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import { readTrace } from '../../../src/queue/trace.js';
import { DEFAULT_VARIANCE_THRESHOLDS } from '../../../src/variance/compute.js';
import { createVarianceStore, type VarianceStore } from '../../../src/variance/store.js';
import { testVariety } from '../../helpers/emulator-variety.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';
import { buildCli, runCli } from '../../helpers/cli.js';

/**
 * Issue 19, charged-vs-calculated tax: the tax a platform charged (the invoice's tax_total) against
 * the tax the emulator computed. A planted variance is recorded (store, counter, trace line); an
 * invoice stating no tax, or one charged as the engine computes, records nothing.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

const invoice = (id: string, version: number, taxTotal?: string) =>
  CanonicalEvent.parse({
    id: `evt-${id}-${version}`,
    type: 'invoice.upserted',
    occurred_at: new Date(BASE + version * 1000).toISOString(),
    connector: 'test',
    record: { kind: 'transaction', source: 'shopify', external_id: id },
    data: {
      issued_at: new Date(BASE).toISOString(),
      status: 'paid',
      currency: 'USD',
      tax_inclusive: false,
      addresses: { shipping: { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' } },
      lines: [{ name: 'Widget', unit_price: '100.00', quantity: '1' }],
      ...(taxTotal === undefined ? {} : { tax_total: taxTotal }),
    },
  });

describe('tax charged against tax computed (pipeline + emulator)', () => {
  const ctx = useRedis();
  let emulator: Emulator & { url: string };
  let api: ApiClients;
  let pipeline: Pipeline;
  let store: VarianceStore;

  beforeEach(async () => {
    emulator = await startEmulator({ port: 0, host: '127.0.0.1', variety: testVariety() });
    api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    store = createVarianceStore(pipeline.producerConnection, pipeline.keys);
    await pipeline.startWorker(
      'transactions',
      createTransactionHandler({
        tax: api.tax,
        records: pipeline.records,
        ledger: createRefundLedger(pipeline.producerConnection, pipeline.keys),
        settings: DEFAULT_SETTINGS.mapping,
        writers: pipeline.writers,
        variance: { store, thresholds: DEFAULT_VARIANCE_THRESHOLDS },
      }),
    );
  });
  afterEach(async () => {
    await pipeline.close();
    await api.close();
    await emulator.close();
  });

  const applied = async (e: CanonicalEvent) => {
    await eventually(async () => {
      const s = await pipeline.records.read(e.record);
      return s.appliedSeq > 0 && s.appliedSeq >= s.seq && s.event?.id === e.id;
    });
  };

  it('records a planted variance, and nothing for an invoice without stated tax; clears it once charged as computed', async () => {
    const undercharged = invoice('1001', 1, '0.00');
    const silent = invoice('1002', 1);
    await pipeline.producer.accept({ events: [undercharged, silent] });
    await applied(undercharged);
    await applied(silent);

    const computed = (await api.tax.transactions.getByKey('shopify', '1001')).tax?.total_tax;
    expect(computed).toBeDefined();
    const listed = await store.list();
    expect(listed.total).toBe(1);
    const entry = listed.entries[0]!;
    expect(entry.record.external_id).toBe('1001');
    expect(entry.charged).toBe('0.00');
    expect(new Decimal(entry.computed).greaterThan(0)).toBe(true);
    expect(entry.difference).toBe(`-${entry.computed}`);
    expect(await ctx.redis.hget(pipeline.keys.counters, 'tax_variances')).toBe('1');
    const trace = await readTrace(pipeline.producerConnection, pipeline.keys, 'transaction|shopify|1001');
    expect(trace.some((t) => t.detail?.includes(`tax variance: charged 0.00, computed ${entry.computed}`))).toBe(true);

    // The platform's corrected order charges what the engine computes: the variance is gone.
    const corrected = invoice('1001', 2, entry.computed);
    await pipeline.producer.accept({ events: [corrected] });
    await applied(corrected);
    expect((await store.list()).total).toBe(0);
  });

  it('an unchanged update counts no new variance, and without a kept engine tax leaves the recorded one as it is', async () => {
    const undercharged = invoice('1003', 1, '0.00');
    await pipeline.producer.accept({ events: [undercharged] });
    await applied(undercharged);
    expect((await store.list()).total).toBe(1);
    expect(await ctx.redis.hget(pipeline.keys.counters, 'tax_variances')).toBe('1');

    // The same order again (a tag changed): not sent, still a variance, not a second one.
    const again = invoice('1003', 2, '0.00');
    await pipeline.producer.accept({ events: [again] });
    await applied(again);
    expect((await store.list()).total).toBe(1);
    expect(await ctx.redis.hget(pipeline.keys.counters, 'tax_variances')).toBe('1');

    // An invoice sent before the engine's tax was kept beside it: nothing to judge an unchanged body by.
    await ctx.redis.hdel(pipeline.keys.state('transaction|shopify|1003'), 'variance_basis');
    const third = invoice('1003', 3, '0.00');
    await pipeline.producer.accept({ events: [third] });
    await applied(third);
    expect((await store.list()).entries.map((e) => e.record.external_id)).toEqual(['1003']);
    expect(await ctx.redis.hget(pipeline.keys.counters, 'tax_variances')).toBe('1');
  });

  describe('the command', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    async function variance(args: string[]): Promise<string> {
      const run = await runCli(main, ['variance', ...args], { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error' });
      expect(run.code, run.output).toBe(0);
      return run.stdout;
    }

    it('taxsync variance lists the planted variance and nothing else', async () => {
      const undercharged = invoice('2001', 1, '0.00');
      const charged = invoice('2002', 1);
      await pipeline.producer.accept({ events: [undercharged, charged] });
      await applied(undercharged);
      await applied(charged);
      const computed = (await api.tax.transactions.getByKey('shopify', '2001')).tax!.total_tax!;
      const found = JSON.parse(await variance(['--json'])) as { total: number; entries: { record: { external_id: string }; charged: string; computed: string }[] };
      expect(found.total).toBe(1);
      expect(found.entries.map((e) => [e.record.external_id, e.charged, e.computed])).toEqual([['2001', '0.00', computed]]);
      expect(await variance([])).toMatch(new RegExp(`shopify/2001\\s+USD\\s+0\\.00\\s+${computed.replace('.', '\\.')}`));
      expect(await variance(['--source', 'stripe'])).toBe('no tax variance recorded\n');
    }, 60_000);
  });
});
