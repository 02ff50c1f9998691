import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordKeyString } from '../../src/domain/record-key.js';
import { readTrace } from '../../src/queue/trace.js';
import { parseFilter } from '../../src/dead-letters/filter.js';
import {
  discardEntries,
  dlqStats,
  entriesById,
  exportEntries,
  listEntries,
  replayEntries,
  selectEntries,
  statusReport,
} from '../../src/dead-letters/service.js';
import { buildCli, spawnCli } from '../helpers/cli.js';
import { keptDelivery, useFlakyCustomers } from '../helpers/dead-letters.js';
import { createPipeline, customerEvent, eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/connectors/shopify/customers-create-tax-exemptions.json', import.meta.url), 'utf8')) as {
  body: unknown;
};

describe('dead-letter tools', () => {
  const ctx = useRedis();
  const flaky = useFlakyCustomers(ctx);

  async function fill(): Promise<void> {
    await flaky.pipeline.producer.accept({ events: [customerEvent(1, 'c-1'), customerEvent(1, 'c-2')] });
    await eventually(async () => (await flaky.pipeline.deadLetters.count()) === 2);
    await flaky.pipeline.producer.accept({
      events: [],
      deadLetters: [keptDelivery('fixed', fixture.body), keptDelivery('still-bad', { ...(fixture.body as object), updated_at: 'yesterday' })],
    });
  }

  it('lists, filters, counts, shows and exports entries of several classes', async () => {
    await fill();
    const all = await listEntries(flaky.deps, {}, { offset: 0, limit: 50 });
    expect(all.total).toBe(4);
    expect(new Set(all.entries.map((e) => e.error.code))).toEqual(new Set(['API_SERVER_ERROR', 'INVALID_PAYLOAD']));
    // Newest first: the worker entries failed after the kept deliveries' (fixed) time.
    expect(all.entries.at(-1)?.raw).toBeDefined();

    expect((await listEntries(flaky.deps, parseFilter({ code: 'invalid_payload' }), { offset: 0, limit: 50 })).total).toBe(2);
    expect((await listEntries(flaky.deps, parseFilter({ externalId: 'c-2' }), { offset: 0, limit: 50 })).entries.map((e) => e.record?.external_id)).toEqual(['c-2']);
    expect((await listEntries(flaky.deps, parseFilter({ text: 'yesterday' }), { offset: 0, limit: 50 })).entries.map((e) => e.id)).toEqual(['still-bad']);
    const page = await listEntries(flaky.deps, {}, { offset: 1, limit: 2 });
    expect(page.entries.map((e) => e.id)).toEqual(all.entries.slice(1, 3).map((e) => e.id));

    expect(await dlqStats(flaky.deps)).toEqual({
      total: 4,
      by_queue: { customers: 2, ingest: 2 },
      by_code: { API_SERVER_ERROR: 2, INVALID_PAYLOAD: 2 },
    });

    const { entries, missing } = await entriesById(flaky.deps, ['fixed', 'nope']);
    expect(missing).toEqual(['nope']);
    expect(entries[0]?.raw?.topic).toBe('customers/create');

    const lines: string[] = [];
    const exported = await exportEntries(flaky.deps, all.entries, { filter: {} }, (line) => lines.push(line));
    expect(exported).toBe(4);
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(all.entries.map((e) => e.id));
    const [audit] = await flaky.deps.audit.list();
    expect(audit).toMatchObject({ actor: 'tester', action: 'export', count: 4, outcome: '4 exported' });
  });

  it('replays a worker entry once the cause is fixed; a second replay adds nothing', async () => {
    await fill();
    const [entry] = await selectEntries(flaky.deps, parseFilter({ externalId: 'c-1' }));
    flaky.broken = false;
    const first = await replayEntries(flaky.deps, [entry!], { actor: 'tester', selection: { ids: [entry!.id] } });
    expect(first.results).toEqual([expect.objectContaining({ id: entry!.id, outcome: 'replayed' })]);
    expect(await flaky.pipeline.deadLetters.get(entry!.id)).toBeUndefined();
    await eventually(async () => {
      const state = await flaky.pipeline.records.read({ kind: 'customer', source: 'api', external_id: 'c-1' });
      return flaky.sent.includes('c-1:version 1') && state.appliedSeq === state.seq;
    });

    const second = await replayEntries(flaky.deps, [entry!], { actor: 'tester', selection: { ids: [entry!.id] } });
    expect(second.results[0]?.outcome).toBe('gone');
    await new Promise((r) => setTimeout(r, 200));
    expect(flaky.sent.filter((s) => s.startsWith('c-1:'))).toEqual(['c-1:version 1']);
    const history = await readTrace(flaky.pipeline.producerConnection, flaky.pipeline.keys, recordKeyString({ kind: 'customer', source: 'api', external_id: 'c-1' }));
    expect(history.map((h) => h.step)).toContain('replayed');

    const audit = await flaky.deps.audit.list();
    expect(audit.map((a) => [a.action, a.outcome])).toEqual([
      ['replay', '1 gone'],
      ['replay', '1 replayed'],
    ]);
  });

  it('removes a superseded entry without sending the old version', async () => {
    await fill();
    const [entry] = await selectEntries(flaky.deps, parseFilter({ externalId: 'c-2' }));
    flaky.broken = false;
    await flaky.pipeline.producer.accept({ events: [customerEvent(2, 'c-2')] });
    await eventually(() => flaky.sent.includes('c-2:version 2'));
    const result = await replayEntries(flaky.deps, [entry!], { actor: 'tester', selection: { filter: parseFilter({ externalId: 'c-2' }) } });
    expect(result.results[0]).toMatchObject({ outcome: 'superseded' });
    expect(await flaky.pipeline.deadLetters.get(entry!.id)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(flaky.sent.filter((s) => s.startsWith('c-2:'))).toEqual(['c-2:version 2']);
    const [audit] = await flaky.deps.audit.list();
    expect(audit).toMatchObject({ action: 'replay', filter: { external_id: 'c-2' }, count: 1, outcome: '1 superseded' });
  });

  it('re-reads kept deliveries: accepted when they now parse, kept with the reason when not', async () => {
    await fill();
    const { entries } = await entriesById(flaky.deps, ['fixed', 'still-bad']);
    const result = await replayEntries(flaky.deps, entries, { actor: 'tester', selection: { ids: ['fixed', 'still-bad'] } });
    expect(result.results[0]).toMatchObject({ id: 'fixed', outcome: 'accepted' });
    expect(result.results[1]).toMatchObject({ id: 'still-bad', outcome: 'still-invalid' });
    expect(result.results[1]?.detail).toMatch(/updated_at/);
    expect(await flaky.pipeline.deadLetters.get('fixed')).toBeUndefined();
    expect(await flaky.pipeline.deadLetters.get('still-bad')).toBeDefined();
    const state = await flaky.pipeline.records.read({ kind: 'customer', source: 'shopify', external_id: '7301234567891' });
    expect(state.seq).toBe(1);

    // Again: the accepted one is gone; its events would be duplicates anyway.
    const again = await replayEntries(flaky.deps, entries, { actor: 'tester', selection: { ids: ['fixed', 'still-bad'] } });
    expect(again.results.map((r) => r.outcome)).toEqual(['gone', 'still-invalid']);
    expect((await flaky.pipeline.records.read({ kind: 'customer', source: 'shopify', external_id: '7301234567891' })).seq).toBe(1);
  });

  it('discards entries and audits it in the same step', async () => {
    await fill();
    const chosen = await selectEntries(flaky.deps, parseFilter({ code: 'INVALID_PAYLOAD' }));
    expect(await discardEntries(flaky.deps, chosen, { filter: parseFilter({ code: 'INVALID_PAYLOAD' }) })).toBe(2);
    expect(await flaky.pipeline.deadLetters.count()).toBe(2);
    expect((await selectEntries(flaky.deps, {})).every((e) => e.queue === 'customers')).toBe(true);
    const [audit] = await flaky.deps.audit.list(1);
    expect(audit).toMatchObject({ action: 'discard', actor: 'tester', filter: { code: 'INVALID_PAYLOAD' }, count: 2 });
    expect(audit?.outcome).toMatch(/^2 discarded \(2 entries \(ingest 2; INVALID_PAYLOAD 2\)\)$/);
  });

  it('reports status: queue counts, dead-letter size by code, VAT unknowns', async () => {
    await fill();
    const report = await statusReport(flaky.deps);
    expect(Object.keys(report.queues)).toEqual(['customers', 'transactions', 'vat-submissions']);
    expect(report.queues.transactions).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0, oldest_waiting_age_s: null });
    expect(report.dead_letter.by_code).toEqual({ API_SERVER_ERROR: 2, INVALID_PAYLOAD: 2 });
    expect(report.vat_ledger.unknown).toBe(0);
  });
});

describe('taxsync dlq and status (the CLI)', () => {
  const ctx = useRedis();
  let main: string;

  beforeAll(async () => {
    main = await buildCli();
  }, 120_000);

  async function cli(args: string[]): Promise<{ code: number | null; stdout: string; output: string }> {
    const run = spawnCli(main, args, { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error' });
    let stdout = '';
    run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const { code } = await run.exited;
    return { code, stdout, output: run.output() };
  }

  it('lists, shows, exports, plans, refuses without --yes off a terminal, replays, and audits', async () => {
    const pipeline = await createPipeline(ctx.url, ctx.prefix);
    try {
      await pipeline.producer.accept({
        events: [],
        deadLetters: [keptDelivery('fixed', fixture.body), keptDelivery('still-bad', { ...(fixture.body as object), updated_at: 'yesterday' })],
      });
    } finally {
      await pipeline.close();
    }

    const list = await cli(['dlq', 'list', '--json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { total: number }).total).toBe(2);
    const table = await cli(['dlq', 'list', '--text', 'yesterday']);
    expect(table.stdout).toMatch(/^ID\s+LAST FAILED\s+QUEUE\s+CODE/);
    expect(table.stdout).toContain('still-bad');
    expect(table.stdout).not.toContain('fixed ');

    expect(JSON.parse((await cli(['dlq', 'stats', '--json'])).stdout)).toEqual({ total: 2, by_queue: { ingest: 2 }, by_code: { INVALID_PAYLOAD: 2 } });
    const show = await cli(['dlq', 'show', 'still-bad']);
    expect(show.stdout).toContain('raw body');
    expect(show.stdout).toContain('yesterday');
    const missing = await cli(['dlq', 'show', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('taxsync: no dead-letter entry nope');

    const exported = await cli(['dlq', 'export', '--code', 'INVALID_PAYLOAD', '--actor', 'ops-ann']);
    expect(exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id).sort()).toEqual(['fixed', 'still-bad']);

    const refused = await cli(['dlq', 'discard', 'still-bad']);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('add --yes');

    const dry = await cli(['dlq', 'replay', '--dry-run']);
    expect(dry.stdout).toContain('plan: replay 2 entries (ingest 2; INVALID_PAYLOAD 2)');

    const replay = await cli(['dlq', 'replay', 'fixed', 'still-bad', '--yes', '--json', '--actor', 'ops-ann']);
    expect(replay.code).toBe(2);
    const summary = JSON.parse(replay.stdout) as { counts: Record<string, number> };
    expect(summary.counts).toMatchObject({ accepted: 1, 'still-invalid': 1 });

    const discard = await cli(['dlq', 'discard', 'still-bad', '--yes']);
    expect(discard.stdout).toContain('1 entries discarded');

    const audit = JSON.parse((await cli(['dlq', 'audit', '--json'])).stdout) as { action: string; actor: string }[];
    expect(audit.map((a) => a.action)).toEqual(['discard', 'replay', 'export']);
    expect(audit[1]?.actor).toBe('ops-ann');

    const status = JSON.parse((await cli(['status', '--json'])).stdout) as { queues: Record<string, { waiting: number }>; dead_letter: { total: number } };
    expect(status.dead_letter.total).toBe(0);
    // The replayed delivery's customer (and its exemption) wait in the customers queue.
    expect(status.queues.customers?.waiting).toBeGreaterThan(0);
  }, 120_000);
});
