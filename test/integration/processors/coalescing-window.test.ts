import { afterEach, describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordHandler } from '../../../src/processors/types.js';
import { createPipeline, customerEvent, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * The coalescing window (TAXSYNC_COALESCE_MS): a record updated again within the window of its
 * previous update is in a burst, and is sent once, with its latest state, when no update has come
 * for the window (or once its job reaches TAXSYNC_COALESCE_MAX_MS). A lone update is sent at once.
 * Windows here are far longer than the gaps between sequential updates, so the outcome does not
 * depend on the machine's speed.
 */

const RECORD = { kind: 'customer' as const, source: 'api', external_id: 'c-1' };
const nameOf = (event: CanonicalEvent) => (event.type === 'customer.upserted' ? event.data.name : undefined);

describe('coalescing window', () => {
  const ctx = useRedis();
  let pipeline: Pipeline | undefined;
  let calls: (string | undefined)[];
  let outcomes: string[];
  const recording: RecordHandler = async (event) => {
    calls.push(nameOf(event));
    return { kind: 'done', detail: 'ok' };
  };

  afterEach(async () => {
    await pipeline?.close();
    pipeline = undefined;
  });

  async function start(options: { coalesceMs: number; coalesceMaxMs?: number }): Promise<Pipeline> {
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

  it('sends a sequential burst of updates, longer than the window, as at most its first update and one call with the last state', async () => {
    const p = await start({ coalesceMs: 500 });
    // One after another, as an ERP's save loop sends them: at least 60 × 20 ms = 1.2 s, more than
    // the window, so the record's job comes due while updates still arrive and waits for the quiet.
    for (let i = 1; i <= 60; i++) {
      await p.producer.accept({ events: [customerEvent(i)] });
      await new Promise((r) => setTimeout(r, 20));
    }
    await eventually(() => settled(p, 60));
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(calls.at(-1)).toBe('version 60');
    expect(outcomes).toContain('coalescing');
    // Nothing between the first call and the last: the burst itself cost one call.
    if (calls.length === 2) expect(calls[0]).toBe('version 1');
  });

  it('sends a lone update at once, whatever the window', async () => {
    // A one-minute window: the update must not wait for it.
    const p = await start({ coalesceMs: 60_000 });
    await p.producer.accept({ events: [customerEvent(1)] });
    await eventually(() => settled(p, 1));
    expect(calls).toEqual(['version 1']);
    expect(outcomes).not.toContain('coalescing');
  });

  it('still sends a record that never goes quiet once its job is TAXSYNC_COALESCE_MAX_MS old', async () => {
    // A one-minute window: only the cap can let the burst's last state out within the deadline.
    const p = await start({ coalesceMs: 60_000, coalesceMaxMs: 300 });
    await p.producer.accept({ events: [customerEvent(1)] });
    await p.producer.accept({ events: [customerEvent(2)] });
    await eventually(() => settled(p, 2));
    expect(calls.at(-1)).toBe('version 2');
  });

  it('with a window of 0 sends each update that arrives after the previous one was applied, as before', async () => {
    const p = await start({ coalesceMs: 0 });
    for (let i = 1; i <= 3; i++) {
      await p.producer.accept({ events: [customerEvent(i)] });
      await eventually(() => settled(p, i));
    }
    expect(calls).toEqual(['version 1', 'version 2', 'version 3']);
  });
});
