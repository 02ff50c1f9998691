import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaxsyncError } from '../../../src/domain/errors.js';
import type { CanonicalEvent } from '../../../src/domain/events.js';
import { readTrace } from '../../../src/queue/trace.js';
import type { RecordHandler } from '../../../src/processors/types.js';
import { createPipeline, customerEvent, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const RECORD = { kind: 'customer' as const, source: 'api', external_id: 'c-1' };
const nameOf = (event: CanonicalEvent) => (event.type === 'customer.upserted' ? event.data.name : undefined);

describe('record processor', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let calls: { name: string | undefined; start: number; end: number }[];

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    calls = [];
  });
  afterEach(async () => {
    await pipeline.close();
  });

  const recording =
    (delayMs = 0): RecordHandler =>
    async (event) => {
      const start = Date.now();
      await new Promise((r) => setTimeout(r, delayMs));
      calls.push({ name: nameOf(event), start, end: Date.now() });
      return { kind: 'done', detail: 'ok', status: 200 };
    };

  it('collapses a burst of 200 updates to one record into at most two calls carrying the last state', async () => {
    // The first call is held until the whole burst is stored: whatever the machine's speed, the
    // burst must then cost one more call, carrying the last update.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await pipeline.startWorker('customers', async (event) => {
      await gate;
      calls.push({ name: nameOf(event), start: 0, end: 0 });
      return { kind: 'done', detail: 'ok' };
    });
    for (let i = 1; i <= 200; i++) await pipeline.producer.accept({ events: [customerEvent(i)] });
    release();
    await eventually(async () => {
      const state = await pipeline.records.read(RECORD);
      return state.seq === 200 && state.appliedSeq === 200;
    });
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(calls.at(-1)?.name).toBe('version 200');
  });

  it('sends an update that arrives while its record is being sent right after, never in parallel', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let first = true;
    await pipeline.startWorker('customers', async (event) => {
      const start = Date.now();
      if (first) {
        first = false;
        await gate;
      }
      calls.push({ name: nameOf(event), start, end: Date.now() });
      return { kind: 'done', detail: 'ok' };
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(() => !first);
    await pipeline.producer.accept({ events: [customerEvent(2)] });
    release();
    await eventually(() => calls.length === 2);
    expect(calls.map((c) => c.name)).toEqual(['version 1', 'version 2']);
    expect(calls[1]!.start).toBeGreaterThanOrEqual(calls[0]!.end);
  });

  it('never sends an event older than the newest one held, and shows the drop in the trace', async () => {
    await pipeline.producer.accept({ events: [customerEvent(5)] });
    const stale = await pipeline.producer.accept({ events: [customerEvent(3)] });
    expect(stale.outcomes).toEqual(['stale']);
    await pipeline.startWorker('customers', recording());
    await eventually(() => calls.length === 1);
    expect(calls[0]!.name).toBe('version 5');
    const steps = (await readTrace(ctx.redis, pipeline.keys, 'customer|api|c-1')).map((t) => t.step);
    expect(steps).toEqual(expect.arrayContaining(['received', 'stale', 'sent', 'answered']));
  });

  it('retries transient failures with backoff until they succeed', async () => {
    let failures = 2;
    await pipeline.startWorker('customers', async (event) => {
      if (failures-- > 0) throw new TaxsyncError('API_SERVER_ERROR', 'PUT /v1/customers/ answered 503');
      calls.push({ name: nameOf(event), start: 0, end: 0 });
      return { kind: 'done', detail: 'ok' };
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(() => calls.length === 1);
    const steps = (await readTrace(ctx.redis, pipeline.keys, 'customer|api|c-1')).map((t) => t.step);
    expect(steps.filter((s) => s === 'retry')).toHaveLength(2);
    expect(await pipeline.deadLetters.count()).toBe(0);
  });

  it('dead-letters a 422 at once with its field errors, and a later event still goes through', async () => {
    let reject = true;
    await pipeline.startWorker('customers', async (event) => {
      if (reject) {
        reject = false;
        throw new TaxsyncError('API_INVALID', 'PUT /v1/customers/ answered 422', { fields: { email: ['not an email'] }, status: 422 });
      }
      calls.push({ name: nameOf(event), start: 0, end: 0 });
      return { kind: 'done', detail: 'ok' };
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry).toMatchObject({ queue: 'customers', record: RECORD, error: { code: 'API_INVALID', fields: { email: ['not an email'] } }, attempts: 1 });
    expect(entry?.event).toMatchObject({ id: 'evt-c-1-1' });
    await pipeline.producer.accept({ events: [customerEvent(2)] });
    await eventually(() => calls.length === 1);
    expect(calls[0]!.name).toBe('version 2');
  });

  it("keeps the trace in the order things happened: a pending event's received line comes before its failed attempt", async () => {
    let failures = 1;
    await pipeline.startWorker('customers', async (event) => {
      if (failures-- > 0) throw new TaxsyncError('API_SERVER_ERROR', 'answered 500', { status: 500 });
      calls.push({ name: nameOf(event), start: 0, end: 0 });
      return { kind: 'done', detail: 'ok', status: 200 };
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await pipeline.records.read(RECORD)).appliedSeq === 1);
    const trace = await readTrace(pipeline.producerConnection, pipeline.keys, 'customer|api|c-1');
    expect(trace.map((t) => t.step)).toEqual(['received', 'sent', 'retry', 'sent', 'answered']);
  });

  it('dead-letters a transient failure once the attempts run out', async () => {
    await pipeline.startWorker('customers', async () => {
      throw new TaxsyncError('API_SERVER_ERROR', 'answered 500', { status: 500 });
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry).toMatchObject({ error: { code: 'API_SERVER_ERROR', retryable: true }, attempts: 4 });
  });

  it('dead-letters a job it cannot read as JOB_INVALID, with a one-line message naming the fields', async () => {
    await pipeline.startWorker('customers', recording());
    // As an incompatible version (or a hand edit) would leave it.
    await pipeline.queues.customers.add('customer', { v: 99, record: 'c-legacy' }, { jobId: 'customer|api|c-legacy' });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry).toMatchObject({ queue: 'customers', record: null, event: null, error: { code: 'JOB_INVALID', retryable: false } });
    expect(entry!.error.message).toMatch(/^job customer\|api\|c-legacy has unreadable data: v: .+; record: .+/);
    expect(entry!.error.message).not.toContain('\n');
    expect(calls).toEqual([]);
  });

  it('still runs a job queued before job data became a reference (version 1, with the record and its own options)', async () => {
    const key = 'customer|api|c-1';
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    // The job as the version before wrote it, in place of the one just queued.
    await (await pipeline.queues.customers.getJob(key))!.remove();
    await pipeline.queues.customers.add('customer', { v: 1, record: RECORD }, { jobId: key, removeOnComplete: true, removeOnFail: true, attempts: 3 });
    await pipeline.startWorker('customers', recording());
    await eventually(async () => (await pipeline.records.read(RECORD)).appliedSeq === 1);
    expect(calls.map((c) => c.name)).toEqual(['version 1']);
    await eventually(async () => (await pipeline.queues.customers.getJob(key)) === undefined);
    expect(await pipeline.deadLetters.count()).toBe(0);
  });

  it('removes a finished job, whose options no longer say so, so its record can be queued again', async () => {
    await pipeline.startWorker('customers', recording());
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await pipeline.records.read(RECORD)).appliedSeq === 1);
    await eventually(async () => (await pipeline.queues.customers.getJob('customer|api|c-1')) === undefined);
    expect(await pipeline.queues.customers.getJobCounts('completed', 'failed')).toEqual({ completed: 0, failed: 0 });
    await pipeline.producer.accept({ events: [customerEvent(2)] });
    await eventually(async () => (await pipeline.records.read(RECORD)).appliedSeq === 2);
  });

  it('waits for what a record needs and goes on once it is there', async () => {
    let present = false;
    await pipeline.startWorker('customers', async (event) => {
      if (!present) return { kind: 'wait', reason: 'original invoice not in the tax engine yet' };
      calls.push({ name: nameOf(event), start: 0, end: 0 });
      return { kind: 'done', detail: 'ok' };
    });
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await readTrace(ctx.redis, pipeline.keys, 'customer|api|c-1')).some((t) => t.step === 'waiting'));
    present = true;
    await eventually(() => calls.length === 1);
  });

  it('dead-letters a record that waited past its deadline', async () => {
    await pipeline.close();
    pipeline = await createPipeline(ctx.url, ctx.prefix, { wait: { deadlineMs: 150, baseMs: 20, capMs: 50 } });
    await pipeline.startWorker('customers', async () => ({ kind: 'wait', reason: 'original invoice not in the tax engine yet' }));
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry?.error.code).toBe('WAITING_EXPIRED');
    expect(entry?.error.message).toContain('original invoice not in the tax engine yet');
  });

  it('pauses the whole queue on 429 and then succeeds without using an attempt', async () => {
    let limited = true;
    await pipeline.startWorker('customers', async (event) => {
      if (limited) {
        limited = false;
        throw new TaxsyncError('API_RATE_LIMITED', 'answered 429', { retryAfterMs: 200, status: 429 });
      }
      calls.push({ name: nameOf(event), start: Date.now(), end: 0 });
      return { kind: 'done', detail: 'ok' };
    });
    const sent = Date.now();
    await pipeline.producer.accept({ events: [customerEvent(1)] });
    await eventually(() => calls.length === 1);
    expect(calls[0]!.start - sent).toBeGreaterThanOrEqual(150);
    expect(await pipeline.deadLetters.count()).toBe(0);
  });
});
