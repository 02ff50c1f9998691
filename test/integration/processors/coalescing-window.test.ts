import { afterEach, describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../../src/domain/events.js';
import { readTrace } from '../../../src/queue/trace.js';
import type { RecordHandler } from '../../../src/processors/types.js';
import { createPipeline, customerEvent, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * The coalescing window (TAXSYNC_COALESCE_MS): updates to one record that keep arriving within the
 * window are sent as one call carrying the latest state once the record goes quiet, or once its
 * job reaches TAXSYNC_COALESCE_MAX_MS. Windows here are far longer than the gaps between
 * sequential updates, so the outcome does not depend on the machine's speed.
 */

const RECORD = { kind: 'customer' as const, source: 'api', external_id: 'c-1' };
const nameOf = (event: CanonicalEvent) => (event.type === 'customer.upserted' ? event.data.name : undefined);

describe('coalescing window', () => {
  const ctx = useRedis();
  let pipeline: Pipeline | undefined;
  let calls: (string | undefined)[];
  const recording: RecordHandler = async (event) => {
    calls.push(nameOf(event));
    return { kind: 'done', detail: 'ok' };
  };

  afterEach(async () => {
    await pipeline?.close();
    pipeline = undefined;
  });

  let outcomes: string[];
  async function start(options: { coalesceDelayMs: number; coalesceMaxMs?: number }): Promise<Pipeline> {
    calls = [];
    outcomes = [];
    pipeline = await createPipeline(ctx.url, ctx.prefix, { ...options, observe: { onOutcome: (_queue, outcome) => outcomes.push(outcome) } });
    await pipeline.startWorker('customers', recording);
    return pipeline;
  }

  const settled = async (p: Pipeline, seq: number) => {
    const state = await p.records.read(RECORD);
    return state.seq === seq && state.appliedSeq === seq;
  };

  it('sends a sequential burst of updates to one record, longer than the window, as one call with the last state', async () => {
    const p = await start({ coalesceDelayMs: 500 });
    // One after another, as an ERP's save loop sends them: at least 60 × 20 ms = 1.2 s, more than
    // the window, so the job comes due while updates still arrive and waits for the quiet.
    for (let i = 1; i <= 60; i++) {
      await p.producer.accept({ events: [customerEvent(i)] });
      await new Promise((r) => setTimeout(r, 20));
    }
    await eventually(() => settled(p, 60));
    expect(calls).toEqual(['version 60']);
    expect(outcomes).toContain('coalescing');
    const steps = (await readTrace(ctx.redis, p.keys, 'customer|api|c-1')).map((t) => t.step);
    expect(steps.filter((s) => s === 'sent')).toHaveLength(1);
  });

  it('still sends a record that never goes quiet once its job is TAXSYNC_COALESCE_MAX_MS old', async () => {
    // A one-minute window: only the cap can let the job run within the test's deadline.
    const p = await start({ coalesceDelayMs: 60_000, coalesceMaxMs: 300 });
    await p.producer.accept({ events: [customerEvent(1)] });
    await eventually(() => settled(p, 1));
    expect(calls).toEqual(['version 1']);
  });

  it('with a window of 0 sends each update that arrives after the previous one was applied, as before', async () => {
    const p = await start({ coalesceDelayMs: 0 });
    for (let i = 1; i <= 3; i++) {
      await p.producer.accept({ events: [customerEvent(i)] });
      await eventually(() => settled(p, i));
    }
    expect(calls).toEqual(['version 1', 'version 2', 'version 3']);
  });
});
