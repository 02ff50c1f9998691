import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { resendRecord } from '../../../src/queue/resend.js';
import { readTrace } from '../../../src/queue/trace.js';
import { createCustomerHandler } from '../../../src/processors/customer.js';
import { replayEntries } from '../../../src/dead-letters/service.js';
import { useFakeApi } from '../../helpers/api-harness.js';
import { pipelineDlqDeps } from '../../helpers/dead-letters.js';
import { erpCustomer, erpInvoice, type ErpEvent } from '../../helpers/erp-events.js';
import { answerJson, jsonBody } from '../../helpers/fake-api.js';
import { createPipeline, eventually, startTransactionsWorker, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Skip unchanged (docs/performance.md): a write whose mapped body equals the one the service last
 * accepted for that record is not sent; it is counted and traced. A replay and `taxsync resend`
 * still send, and after a failed call (which the service may have applied) the next body is sent.
 */

const canonical = (event: ErpEvent) => CanonicalEvent.parse({ ...event, connector: 'erp' });
const INVOICE = { kind: 'transaction' as const, source: 'api', external_id: 'INV-1' };
const LINES = [{ unit_price: '80.00', quantity: '1' }];

describe('skip unchanged', () => {
  const redis = useRedis();
  const ctx = useFakeApi();
  let pipeline: Pipeline;
  let skipped: string[];
  let failing: boolean;

  beforeEach(async () => {
    skipped = [];
    failing = false;
    const retry = { attempts: 1, baseMs: 10, capMs: 20 };
    pipeline = await createPipeline(redis.url, redis.prefix, { retry, observe: { onUnchanged: (queue) => skipped.push(queue) } });
    ctx.api.on('PUT /v1/transactions/', (req, res) => {
      if (failing) return answerJson(res, 500, { detail: 'injected' });
      const body = jsonBody(req) as { external_id: string };
      answerJson(res, 201, { id: `id-${body.external_id}`, source: 'api', external_id: body.external_id, transaction_status: 'active' });
    });
    ctx.api.on('PUT /v1/customers/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      answerJson(res, 201, { id: `id-${body.external_id}`, source: 'api', external_id: body.external_id });
    });
    const clients = ctx.connect();
    await startTransactionsWorker(pipeline, clients.tax);
    await pipeline.startWorker('customers', createCustomerHandler({ tax: clients.tax, settings: DEFAULT_SETTINGS.mapping, writers: pipeline.writers }));
  });
  afterEach(async () => {
    await pipeline.close();
  });

  const appliedAt = async (seq: number, record: RecordKey = INVOICE) => {
    const state = await pipeline.records.read(record);
    return state.seq === seq && state.appliedSeq === seq;
  };
  const invoicePuts = () => ctx.api.requestsTo('PUT /v1/transactions/');
  const steps = async (record = 'transaction|api|INV-1') => (await readTrace(redis.redis, pipeline.keys, record)).map((t) => t.step);

  it('sends nothing for an update whose body is the one last accepted, counts it and shows it in the trace', async () => {
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 1, LINES))] });
    await eventually(() => appliedAt(1));
    // A newer event (a note or a tag changed at the source) that maps to the same body.
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 2, LINES))] });
    await eventually(() => appliedAt(2));
    expect(invoicePuts()).toHaveLength(1);
    expect(skipped).toEqual(['transactions']);
    expect(await steps()).toEqual(['received', 'sent', 'answered', 'received', 'unchanged']);

    // A changed body goes out.
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 3, [{ unit_price: '90.00', quantity: '1' }]))] });
    await eventually(() => appliedAt(3));
    expect(invoicePuts()).toHaveLength(2);
    expect(jsonBody(invoicePuts()[1]!)).toMatchObject({ items: [expect.objectContaining({ unit_price: '90' })] });
    expect(skipped).toHaveLength(1);
  });

  it('skips an unchanged customer too', async () => {
    const customer = { kind: 'customer' as const, source: 'api', external_id: 'C-1' };
    await pipeline.producer.accept({ events: [canonical(erpCustomer('C-1', 1))] });
    await eventually(() => appliedAt(1, customer));
    await pipeline.producer.accept({ events: [canonical(erpCustomer('C-1', 2, { name: 'C-1 version 1' }))] });
    await eventually(() => appliedAt(2, customer));
    expect(ctx.api.requestsTo('PUT /v1/customers/')).toHaveLength(1);
    expect(skipped).toEqual(['customers']);
  });

  it('sends an unchanged body again when the record is resent (taxsync resend)', async () => {
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 1, LINES))] });
    await eventually(() => appliedAt(1));
    const deps = { ...pipelineDlqDeps(pipeline, { actor: 'tester' }) };
    expect(await resendRecord(deps, INVOICE)).toBe('queued');
    await eventually(() => invoicePuts().length === 2);
    // The resend makes the newest version a new one (seq 2), so a job still running sends it too.
    await eventually(() => appliedAt(2));
    expect(jsonBody(invoicePuts()[1]!)).toEqual(jsonBody(invoicePuts()[0]!));
    expect(skipped).toEqual([]);
    expect((await createAuditLog(pipeline.producerConnection, pipeline.keys).list())[0]).toMatchObject({ action: 'resend', actor: 'tester', ids: ['transaction|api|INV-1'] });
    expect(await resendRecord(deps, { ...INVOICE, external_id: 'never-seen' })).toBe('unknown');
  });

  it('sends after a failed call, and a dead-letter replay sends the version it kept', async () => {
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 1, LINES))] });
    await eventually(() => appliedAt(1));
    // v2 fails (one attempt: a dead letter). The service may still have applied it (a timeout
    // looks the same), so the body last accepted is no longer known ...
    failing = true;
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 2, [{ unit_price: '90.00', quantity: '1' }]))] });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    failing = false;
    // ... and v3, back to v1's body, is sent.
    await pipeline.producer.accept({ events: [canonical(erpInvoice('INV-1', 3, LINES))] });
    await eventually(() => appliedAt(3));
    expect(invoicePuts()).toHaveLength(3);
    expect(skipped).toEqual([]);

    // The replay of v2's entry: a newer version was applied since, so it is superseded (never
    // sent over the newer state). A replay with --remap sends the latest state, unchanged or not.
    const [entry] = await pipeline.deadLetters.list();
    const dlq = pipelineDlqDeps(pipeline, { actor: 'tester' });
    const replayed = await replayEntries(dlq, [entry!], { actor: 'tester', selection: { ids: [entry!.id] }, remap: true });
    expect(replayed.results.map((r) => r.outcome)).toEqual(['remapped']);
    await eventually(() => invoicePuts().length === 4);
    expect(jsonBody(invoicePuts()[3]!)).toEqual(jsonBody(invoicePuts()[2]!));
    expect(skipped).toEqual([]);
  });
});
