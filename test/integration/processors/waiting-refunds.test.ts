import type { FastifyInstance } from 'fastify';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../../src/domain/events.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createExemptionHandler } from '../../../src/processors/exemption.js';
import type { WaitPolicy } from '../../../src/processors/record-processor.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createWaitingIndex } from '../../../src/processors/waiting.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import { replayEntries } from '../../../src/dead-letters/service.js';
import { useFakeApi } from '../../helpers/api-harness.js';
import { buildCli, spawnCli } from '../../helpers/cli.js';
import { pipelineDlqDeps } from '../../helpers/dead-letters.js';
import { answerJson, jsonBody } from '../../helpers/fake-api.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Item 7 of issue 14: a refund (here a Stripe credit note) whose original was never seen — created
 * before taxsync went live — is visible from its first wait (the waiting index: `taxsync status`,
 * the web view), and after TAXSYNC_REFUND_WAIT is dead-lettered as REFUND_ORIGINAL_MISSING saying
 * which original is missing and how to supply it. Other waits keep WAITING_EXPIRED.
 */

// Ids in the form of Stripe's API reference examples (credit note and invoice objects).
const INVOICE = 'in_1MtHbELkdIwHu7ixl4OzzPMv';
const CREDIT_NOTE = 'refund-cn_1MxvRqLkdIwHu7ixY0xbUcxk';
const ORIGINAL_ID = '8e2a4c61-3d5b-4f7a-9c1e-6b0d2f4a8c13';
const ADMIN_TOKEN = 'adm1n-t0ken-for-the-waiting-section-of-the-web-view';
const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

function event(input: Omit<CanonicalEventInput, 'connector' | 'occurred_at'> & { version: number }): CanonicalEvent {
  const { version, ...rest } = input;
  return CanonicalEvent.parse({ ...rest, connector: 'stripe', occurred_at: new Date(BASE + version * 1000).toISOString() });
}

const creditNote = () =>
  event({
    id: 'evt_1MxvRrLkdIwHu7ixcredit',
    version: 2,
    type: 'refund.created',
    record: { kind: 'transaction', source: 'stripe', external_id: CREDIT_NOTE },
    data: { invoice_external_id: INVOICE, number: 'MYCO-0001-CN-01', issued_at: new Date(BASE).toISOString(), currency: 'USD', amount: '25.00' },
  });

const invoice = () =>
  event({
    id: 'evt_1MtHbFLkdIwHu7ixinvoice',
    version: 1,
    type: 'invoice.upserted',
    record: { kind: 'transaction', source: 'stripe', external_id: INVOICE },
    data: {
      number: 'MYCO-0001',
      issued_at: new Date(BASE).toISOString(),
      status: 'paid',
      currency: 'USD',
      tax_inclusive: false,
      addresses: { shipping: { street: '510 Townsend St', city: 'San Francisco', state: 'CA', zip: '94103', country: 'US' } },
      lines: [{ id: 'il_1', name: 'Pro plan', unit_price: '100.00', quantity: '1' }],
    },
  });

describe('refunds waiting for their original', () => {
  const redis = useRedis();
  const ctx = useFakeApi();
  let pipeline: Pipeline;
  let stored: Map<string, unknown>;
  let app: FastifyInstance | undefined;

  beforeEach(() => {
    stored = new Map();
    // A tax engine that has what was upserted, and nothing from before taxsync went live.
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      const record = { ...body, id: body.external_id === INVOICE ? ORIGINAL_ID : '2d4f6a8c-0e1b-4d3f-9a5c-7e9b1d3f5a70' };
      stored.set(body.external_id, record);
      answerJson(res, 201, record);
    });
    ctx.api.fallback((req, res) => {
      const found = /^\/v1\/(transactions|customers)\/stripe\/(.+)$/.exec(req.path);
      const record = found && req.method === 'GET' ? stored.get(decodeURIComponent(found[2]!)) : undefined;
      answerJson(res, record ? 200 : 404, record ?? { detail: 'Not found.' });
    });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await pipeline.close();
  });

  async function start(wait: WaitPolicy): Promise<void> {
    pipeline = await createPipeline(redis.url, redis.prefix, { wait });
    const clients = ctx.connect();
    await pipeline.startWorker(
      'transactions',
      createTransactionHandler({ tax: clients.tax, records: pipeline.records, ledger: createRefundLedger(pipeline.producerConnection, pipeline.keys), settings: DEFAULT_SETTINGS.mapping, writers: pipeline.writers }),
    );
    await pipeline.startWorker('customers', createExemptionHandler({ tax: clients.tax, records: pipeline.records, settings: DEFAULT_SETTINGS.mapping }));
  }

  const waiting = () => createWaitingIndex(pipeline.producerConnection, pipeline.keys).list();
  const refundKey = { kind: 'transaction' as const, source: 'stripe', external_id: CREDIT_NOTE };

  describe('shown at once', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    async function status(json: boolean): Promise<string> {
      const run = spawnCli(main, ['status', ...(json ? ['--json'] : [])], { REDIS_URL: redis.url, TAXSYNC_PREFIX: redis.prefix, LOG_LEVEL: 'error' });
      let stdout = '';
      run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      const { code } = await run.exited;
      expect(code, run.output()).toBe(0);
      return stdout;
    }

    it('lists a credit note waiting for its invoice in taxsync status and the web view, until the invoice arrives', async () => {
      await start({ deadlineMs: 3_600_000, refundDeadlineMs: 3_600_000, baseMs: 50, capMs: 200 });
      await pipeline.producer.accept({ events: [creditNote()] });
      await eventually(async () => (await waiting()).total === 1);

      const [listed] = (await waiting()).records;
      expect(listed).toMatchObject({ record: refundKey, waiting_for: { what: 'original', record: { kind: 'transaction', source: 'stripe', external_id: INVOICE } } });
      expect(listed!.age_s).toBeGreaterThanOrEqual(0);

      const report = JSON.parse(await status(true)) as { waiting: { total: number; records: { record: unknown; waiting_for: unknown; age_s: number; since: string }[] } };
      expect(report.waiting.total).toBe(1);
      expect(report.waiting.records[0]).toMatchObject({ record: refundKey, waiting_for: { what: 'original', record: { source: 'stripe', external_id: INVOICE } } });
      expect(Date.parse(report.waiting.records[0]!.since)).not.toBeNaN();
      expect(await status(false)).toMatch(new RegExp(`transaction stripe/${CREDIT_NOTE}\\s+original stripe/${INVOICE}\\s+\\d+ s`));

      app = await buildApp({
        connectors: {},
        producer: pipeline.producer,
        logger: createLogger({ level: 'silent' }),
        metrics: createMetrics({ defaultMetrics: false }),
        bodyLimitBytes: 4096,
        rawBodyLimitBytes: 100,
        ready: () => Promise.resolve(true),
        health: { usesEmulator: true },
        admin: {
          operators: [{ name: 'ops-ann', token: new Secret(ADMIN_TOKEN) }],
          sessions: { redis: pipeline.producerConnection, keys: pipeline.keys },
          queues: Object.values(pipeline.queues),
          dlq: (actor) => pipelineDlqDeps(pipeline, { actor }),
          waiting: () => createWaitingIndex(pipeline.producerConnection, pipeline.keys).list({ limit: 50 }),
        },
      });
      const page = await app.inject({ url: '/admin/dead-letters', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Waiting (1)');
      expect(page.body).toContain(`transaction stripe/${CREDIT_NOTE}`);
      expect(page.body).toContain(`original stripe/${INVOICE}`);

      // The invoice arrives: the credit note goes on and leaves the list.
      await pipeline.producer.accept({ events: [invoice()] });
      await eventually(async () => (await waiting()).total === 0);
      expect(stored.get(CREDIT_NOTE)).toMatchObject({ created_from: ORIGINAL_ID, refund_info: { refund_linked_percentage: '0.25' } });
      expect((JSON.parse(await status(true)) as { waiting: { total: number } }).waiting.total).toBe(0);
      const after = await app.inject({ url: '/admin/dead-letters', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(after.body).toContain('No record is waiting');
    }, 120_000);
  });

  it('dead-letters the credit note as REFUND_ORIGINAL_MISSING after TAXSYNC_REFUND_WAIT, naming the invoice and how to supply it; a replay after the invoice links it', async () => {
    await start({ deadlineMs: 3_600_000, refundDeadlineMs: 1_000, baseMs: 50, capMs: 200 });
    await pipeline.producer.accept({ events: [creditNote()] });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);

    const [entry] = await pipeline.deadLetters.list();
    expect(entry).toMatchObject({ queue: 'transactions', record: refundKey, error: { code: 'REFUND_ORIGINAL_MISSING', retryable: false } });
    expect(entry!.error.message).toContain(`waiting for its original stripe/${INVOICE}`);
    expect(entry!.error.message).toContain('taxsync ingest');
    expect(entry!.error.message).toContain(`taxsync dlq replay ${entry!.id}`);
    expect(entry!.error.fields).toEqual({ original: [`transaction stripe/${INVOICE} is missing`] });
    expect((await waiting()).total).toBe(0);

    // Supplied: the invoice is ingested, then the entry replayed.
    await pipeline.producer.accept({ events: [invoice()] });
    await eventually(() => stored.has(INVOICE));
    const summary = await replayEntries(pipelineDlqDeps(pipeline, { actor: 'ops-ann' }), [entry!], { actor: 'ops-ann', selection: { ids: [entry!.id] } });
    expect(summary.counts.replayed).toBe(1);
    // 25.00 of the invoice's 100.00 (tax-exclusive): 25.00 ÷ 100.00 = 0.25.
    await eventually(() => stored.has(CREDIT_NOTE));
    expect(stored.get(CREDIT_NOTE)).toMatchObject({ transaction_type: 'refund', created_from: ORIGINAL_ID, refund_info: { refund_linked_percentage: '0.25' } });
  });

  it('keeps WAITING_EXPIRED, after the general wait, for an exemption waiting for its customer', async () => {
    await start({ deadlineMs: 1_000, refundDeadlineMs: 3_600_000, baseMs: 50, capMs: 200 });
    await pipeline.producer.accept({
      events: [
        event({
          id: 'evt_exemption_1',
          version: 1,
          type: 'exemption.upserted',
          record: { kind: 'exemption', source: 'stripe', external_id: 'txcd_exempt_cus_NffrFeUfNV2Hib' },
          data: { customer_external_id: 'cus_NffrFeUfNV2Hib', country: 'US', jurisdictions: ['NY'], start_date: '2026-01-01', exemption_type: 'full' },
        }),
      ],
    });
    await eventually(async () => (await waiting()).records.some((w) => w.waiting_for?.what === 'customer'));
    expect((await waiting()).records[0]!.waiting_for).toEqual({ what: 'customer', record: { kind: 'customer', source: 'stripe', external_id: 'cus_NffrFeUfNV2Hib' } });

    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry!.error.code).toBe('WAITING_EXPIRED');
    expect(entry!.error.message).toContain('cus_NffrFeUfNV2Hib');
    expect((await waiting()).total).toBe(0);
  });
});
