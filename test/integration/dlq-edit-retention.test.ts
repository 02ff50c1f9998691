import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../src/domain/events.js';
import type { DeadLetterEntry } from '../../src/queue/dead-letter.js';
import { parseFilter } from '../../src/dead-letters/filter.js';
import { editEntry } from '../../src/dead-letters/edit.js';
import { applyRetention, archivedCounter, type ArchivedEntry } from '../../src/dead-letters/retention.js';
import { replayEntries, selectEntries } from '../../src/dead-letters/service.js';
import { keptDelivery, useFlakyCustomers } from '../helpers/dead-letters.js';
import { createPipeline, customerEvent, eventually, type Pipeline } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/connectors/shopify/customers-create-tax-exemptions.json', import.meta.url), 'utf8')) as {
  body: { updated_at: string };
};

const nameOf = (event: CanonicalEvent) => (event.type === 'customer.upserted' ? event.data.name : undefined);
const C1 = { kind: 'customer', source: 'api', external_id: 'c-1' } as const;

describe('dlq edit, replay --remap', () => {
  const ctx = useRedis();
  const flaky = useFlakyCustomers(ctx);

  async function deadLettered(externalId = 'c-1'): Promise<DeadLetterEntry> {
    await flaky.pipeline.producer.accept({ events: [customerEvent(1, externalId)] });
    await eventually(async () => (await selectEntries(flaky.deps, parseFilter({ externalId }))).length === 1);
    return (await selectEntries(flaky.deps, parseFilter({ externalId })))[0]!;
  }

  it('edits a worker entry (original kept, audited) and replay sends the edited event as the newest version', async () => {
    const entry = await deadLettered();
    const plan = await editEntry(flaky.deps, entry.id, { data: { name: 'fixed name' } }, 'ops-ann');
    expect(plan.paths).toEqual(['data.name']);
    const saved = await flaky.pipeline.deadLetters.get(entry.id);
    expect((saved?.event as CanonicalEvent).data).toMatchObject({ name: 'fixed name' });
    expect((saved?.event_original as CanonicalEvent).data).toMatchObject({ name: 'version 1' });
    expect(saved?.edited).toMatchObject({ actor: 'ops-ann', count: 1 });
    // A second edit keeps the first original.
    await editEntry(flaky.deps, entry.id, { data: { name: 'fixed again' } }, 'ops-ann');
    const twice = await flaky.pipeline.deadLetters.get(entry.id);
    expect((twice?.event_original as CanonicalEvent).data).toMatchObject({ name: 'version 1' });
    expect(twice?.edited?.count).toBe(2);
    const [audit] = await flaky.deps.audit.list(1);
    expect(audit).toMatchObject({ action: 'edit', actor: 'ops-ann', ids: [entry.id], count: 1 });
    expect(audit?.outcome).toContain('data.name');

    flaky.broken = false;
    const result = await replayEntries(flaky.deps, [entry], { actor: 'tester', selection: { ids: [entry.id] } });
    expect(result.results[0]).toMatchObject({ outcome: 'replayed' });
    await eventually(() => flaky.sent.includes('c-1:fixed again'));
    const state = await flaky.pipeline.records.read(C1);
    expect(state.event && nameOf(state.event)).toBe('fixed again');
    await eventually(async () => (await flaky.pipeline.records.read(C1)).appliedSeq === state.seq);
    expect(flaky.sent).toEqual(['c-1:fixed again']);
  });

  it('refuses patches that change id, record or occurred_at, or leave an invalid event; nothing is saved', async () => {
    const entry = await deadLettered();
    await expect(editEntry(flaky.deps, entry.id, { record: { external_id: 'c-9' } }, 'x')).rejects.toThrow(/changes the event's record/);
    await expect(editEntry(flaky.deps, entry.id, { id: 'other' }, 'x')).rejects.toThrow(/changes the event's id/);
    await expect(editEntry(flaky.deps, entry.id, { occurred_at: '2020-01-01T00:00:00Z' }, 'x')).rejects.toThrow(/occurred_at/);
    await expect(editEntry(flaky.deps, entry.id, { data: { name: 42 } }, 'x')).rejects.toThrow(/not a valid canonical event: data\.name/);
    await expect(editEntry(flaky.deps, 'nope', { data: {} }, 'x')).rejects.toThrow(/no dead-letter entry nope/);
    expect(await flaky.pipeline.deadLetters.get(entry.id)).toEqual(entry);
    expect(await flaky.deps.audit.list()).toEqual([]);
  });

  it('an edited entry whose record received a newer event is superseded: the edit is never sent', async () => {
    const entry = await deadLettered();
    await editEntry(flaky.deps, entry.id, { data: { name: 'stale edit' } }, 'x');
    flaky.broken = false;
    await flaky.pipeline.producer.accept({ events: [customerEvent(2, 'c-1')] });
    await eventually(() => flaky.sent.includes('c-1:version 2'));
    const result = await replayEntries(flaky.deps, [entry], { actor: 'tester', selection: { ids: [entry.id] } });
    expect(result.results[0]).toMatchObject({ outcome: 'superseded' });
    await new Promise((r) => setTimeout(r, 200));
    expect(flaky.sent).toEqual(['c-1:version 2']);
    const state = await flaky.pipeline.records.read(C1);
    expect(state.event && nameOf(state.event)).toBe('version 2');
  });

  it('--remap queues the latest state even after a newer event; refused for kept deliveries', async () => {
    const entry = await deadLettered();
    flaky.broken = false;
    await flaky.pipeline.producer.accept({ events: [customerEvent(2, 'c-1')], deadLetters: [keptDelivery('kept', fixture.body)] });
    await eventually(() => flaky.sent.includes('c-1:version 2'));
    await eventually(async () => {
      const s = await flaky.pipeline.records.read(C1);
      return s.appliedSeq === s.seq;
    });
    const kept = await flaky.pipeline.deadLetters.get('kept');
    const result = await replayEntries(flaky.deps, [entry, kept!], { actor: 'tester', selection: { ids: [entry.id, 'kept'] }, remap: true });
    expect(result.results[0]).toMatchObject({ id: entry.id, outcome: 'remapped' });
    expect(result.results[0]?.detail).toContain('evt-c-1-2');
    expect(result.results[1]).toMatchObject({ id: 'kept', outcome: 'skipped' });
    expect(result.results[1]?.detail).toMatch(/--remap needs a record/);
    await eventually(() => flaky.sent.length === 2);
    expect(flaky.sent).toEqual(['c-1:version 2', 'c-1:version 2']);
    expect(await flaky.pipeline.deadLetters.get(entry.id)).toBeUndefined();
    expect(await flaky.pipeline.deadLetters.get('kept')).toBeDefined();
    const [audit] = await flaky.deps.audit.list(1);
    expect(audit?.outcome).toBe('--remap: 1 remapped, 1 skipped');
  });

  it('edits a kept JSON delivery (validated by the connector) and replays it', async () => {
    await flaky.pipeline.producer.accept({ events: [], deadLetters: [keptDelivery('bad', { ...fixture.body, updated_at: 'yesterday' })] });
    await expect(editEntry(flaky.deps, 'bad', { updated_at: 'still wrong' }, 'x')).rejects.toThrow(/still does not parse/);
    const plan = await editEntry(flaky.deps, 'bad', { updated_at: fixture.body.updated_at }, 'x');
    expect(plan.target).toBe('raw body');
    const saved = await flaky.pipeline.deadLetters.get('bad');
    expect(JSON.parse(saved!.raw_body_original!)).toMatchObject({ updated_at: 'yesterday' });
    const result = await replayEntries(flaky.deps, [saved!], { actor: 'tester', selection: { ids: ['bad'] } });
    expect(result.results[0]).toMatchObject({ outcome: 'accepted' });
    expect(await flaky.pipeline.deadLetters.get('bad')).toBeUndefined();
  });
});

describe('dlq retention', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let dir: string;
  const now = new Date('2026-11-21T12:00:00.000Z');
  const logs: { obj: object; msg: string }[] = [];
  const logger = { info: (obj: object, msg: string) => logs.push({ obj, msg }) };

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    dir = mkdtempSync(join(tmpdir(), 'taxsync-dlq-archive-'));
    logs.length = 0;
    const day = (n: number) => new Date(now.getTime() - n * 86_400_000).toISOString();
    await pipeline.producer.accept({
      events: [],
      deadLetters: [keptDelivery('d1', {}, { at: day(1) }), keptDelivery('d2', {}, { at: day(2) }), keptDelivery('d3', {}, { at: day(3) }), keptDelivery('d40', {}, { at: day(40) })],
    });
  });
  afterEach(async () => {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = async () => (await selectEntries({ deadLetters: pipeline.deadLetters }, {})).map((e) => e.id);
  const retentionDeps = () => ({ deadLetters: pipeline.deadLetters, redis: ctx.redis, keys: pipeline.keys, logger, clock: () => now });

  it('archives entries over the age limit and the cap, then removes them; others untouched', async () => {
    const archive = join(dir, 'sub', 'archive.jsonl');
    const result = await applyRetention(retentionDeps(), { maxEntries: 2, maxAgeDays: 30 }, archive);
    expect(result).toMatchObject({ removed: 2, byAge: 1, byCap: 1, kept: 2 });
    expect(await ids()).toEqual(['d1', 'd2']);
    const lines = readFileSync(archive, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ArchivedEntry);
    expect(lines.map((l) => [l.entry.id, l.reason])).toEqual([
      ['d3', 'max-entries'],
      ['d40', 'max-age'],
    ]);
    expect(lines[0]?.entry.raw?.delivery_id).toBe('delivery-d3');
    expect(logs).toEqual([{ obj: expect.objectContaining({ removed: 2, archive }), msg: expect.stringContaining(archive) }]);

    // Again: nothing more to do, the archive is appended to, never rewritten.
    expect((await applyRetention(retentionDeps(), { maxEntries: 2, maxAgeDays: 30 }, archive)).removed).toBe(0);
    expect(readFileSync(archive, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('does nothing by default (no cap, no age limit)', async () => {
    const archive = join(dir, 'archive.jsonl');
    const result = await applyRetention(retentionDeps(), { maxEntries: 0, maxAgeDays: 0 }, archive);
    expect(result).toMatchObject({ removed: 0, kept: 4 });
    expect(await ids()).toEqual(['d1', 'd2', 'd3', 'd40']);
    expect(logs).toEqual([]);
  });

  it('skips while another process holds the lease: nothing read, archived or removed', async () => {
    await ctx.redis.set(pipeline.keys.dlqRetentionLease, 'someone-else', 'PX', 60_000);
    const archive = join(dir, 'archive.jsonl');
    expect(await applyRetention(retentionDeps(), { maxEntries: 1, maxAgeDays: 0 }, archive)).toMatchObject({ busy: true, removed: 0 });
    expect(await ids()).toEqual(['d1', 'd2', 'd3', 'd40']);
    expect(existsSync(archive)).toBe(false);
    expect(await ctx.redis.get(pipeline.keys.dlqRetentionLease)).toBe('someone-else'); // not released by the loser
  });

  it('two processes at once: each entry archived once, the counters say how many, the lease is released', async () => {
    const other = new Redis(ctx.url);
    try {
      const [a, b] = await Promise.all([
        applyRetention(retentionDeps(), { maxEntries: 1, maxAgeDays: 30 }, join(dir, 'a.jsonl')),
        applyRetention({ ...retentionDeps(), redis: other }, { maxEntries: 1, maxAgeDays: 30 }, join(dir, 'b.jsonl')),
      ]);
      expect(a.removed + b.removed).toBe(3);
      const archived = ['a.jsonl', 'b.jsonl']
        .filter((name) => existsSync(join(dir, name)))
        .flatMap((name) => readFileSync(join(dir, name), 'utf8').trim().split('\n'))
        .map((line) => (JSON.parse(line) as ArchivedEntry).entry.id);
      expect(archived.sort()).toEqual(['d2', 'd3', 'd40']);
      expect(await ids()).toEqual(['d1']);
      expect(await ctx.redis.hgetall(pipeline.keys.counters)).toMatchObject({ [archivedCounter('max-age')]: '1', [archivedCounter('max-entries')]: '2' });
      expect(await ctx.redis.exists(pipeline.keys.dlqRetentionLease)).toBe(0);
    } finally {
      other.disconnect();
    }
  });

  it('removes nothing when the archive cannot be written', async () => {
    // The archive path is a directory: the append fails.
    await expect(applyRetention(retentionDeps(), { maxEntries: 1, maxAgeDays: 0 }, dir)).rejects.toThrow(/nothing removed/);
    expect(await ids()).toEqual(['d1', 'd2', 'd3', 'd40']);
    expect(logs).toEqual([]);
  });
});
