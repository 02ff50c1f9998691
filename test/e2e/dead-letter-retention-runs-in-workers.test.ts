import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeadLetterStore, type NewDeadLetter } from '../../src/queue/dead-letter.js';
import type { ArchivedEntry } from '../../src/dead-letters/retention.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

function entry(n: number): NewDeadLetter {
  // Failure times one second apart, in order: retention keeps the newest.
  const at = new Date(Date.UTC(2026, 10, 21, 2, 0, n)).toISOString();
  return {
    id: `e${String(n).padStart(2, '0')}`,
    queue: 'ingest',
    record: null,
    event: null,
    error: { code: 'INVALID_PAYLOAD', message: 'payload does not match the schema', retryable: false },
    http: null,
    raw: { connector: 'shopify', topic: 'customers/create', received_at: at, body: '{}', body_truncated: false },
    attempts: 0,
    first_failed_at: at,
    last_failed_at: at,
  };
}

// Issue 7: with a cap or an age limit set, the workers apply retention by themselves — archive,
// then remove, with a metric and a log line — and several worker processes never archive an
// entry twice.
describe('dead-letter retention in the workers', () => {
  const ctx = useRedis();
  let dir: string;
  const daemons: Daemon[] = [];
  const logs: string[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-retention-'));
    logs.length = 0;
  });
  afterEach(async () => {
    await Promise.all(daemons.splice(0).map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (name: string, env: Record<string, string>) => {
    const daemon = await startDaemon(ctx.url, ctx.prefix, {
      env: { LOG_LEVEL: 'info', TAXSYNC_DLQ_ARCHIVE: join(dir, `${name}.jsonl`), ...env },
      logDestination: { write: (line: string) => void logs.push(line) },
    });
    daemons.push(daemon);
    return daemon;
  };
  const archived = (): ArchivedEntry[] =>
    ['a', 'b']
      .map((name) => join(dir, `${name}.jsonl`))
      .filter((path) => existsSync(path))
      .flatMap((path) => readFileSync(path, 'utf8').trim().split('\n'))
      .map((line) => JSON.parse(line) as ArchivedEntry);

  it('two worker processes keep the queue at its cap; every entry over it is archived exactly once', async () => {
    const env = { TAXSYNC_DLQ_MAX_ENTRIES: '3', TAXSYNC_DLQ_RETENTION_INTERVAL_MS: '1000' };
    const a = await start('a', env);
    await start('b', env);
    const deadLetters = createDeadLetterStore(a.queues['dead-letter']);

    // Three waves, so both processes get rounds with something to do.
    for (const wave of [0, 1, 2]) {
      for (let i = 0; i < 5; i++) await deadLetters.add(entry(wave * 5 + i));
      await eventually(async () => (await deadLetters.count()) === 3, 30_000);
    }

    const ids = archived().map((line) => line.entry.id);
    expect(ids.sort()).toEqual(Array.from({ length: 12 }, (_, n) => `e${String(n).padStart(2, '0')}`));
    expect(archived().every((line) => line.reason === 'max-entries')).toBe(true);
    expect((await deadLetters.list()).map((e) => e.id).sort()).toEqual(['e12', 'e13', 'e14']);

    // The metric counts what every process archived (it lives in Redis); the log says where to.
    const text = await a.metrics.registry.metrics();
    expect(text).toContain('taxsync_dead_letter_archived_total{reason="max-entries"} 12');
    const lines = logs.map((l) => JSON.parse(l) as { msg: string; removed?: number; archive?: string });
    const said = lines.filter((l) => l.msg.startsWith('dead-letter retention: '));
    expect(said.reduce((n, l) => n + (l.removed ?? 0), 0)).toBe(12);
    expect(said.every((l) => l.msg === `dead-letter retention: ${l.removed} entries archived to ${l.archive} and removed`)).toBe(true);
    expect(lines.filter((l) => l.msg === 'dead-letter retention scheduled')).toHaveLength(2);
  }, 120_000);

  it('removes entries past the age limit and leaves newer ones; off by default', async () => {
    const off = await start('a', {});
    const deadLetters = createDeadLetterStore(off.queues['dead-letter']);
    await deadLetters.add({ ...entry(1), id: 'old', last_failed_at: new Date(Date.now() - 40 * 86_400_000).toISOString() });
    await deadLetters.add({ ...entry(2), id: 'new', last_failed_at: new Date().toISOString() });
    expect(logs.some((l) => l.includes('dead-letter retention scheduled'))).toBe(false);
    await daemons.pop()!.stop();

    const on = await start('b', { TAXSYNC_DLQ_MAX_AGE_DAYS: '30', TAXSYNC_DLQ_RETENTION_INTERVAL_MS: '1000' });
    const store = createDeadLetterStore(on.queues['dead-letter']);
    await eventually(async () => (await store.get('old')) === undefined, 30_000);
    expect(await store.get('new')).toBeDefined();
    expect(archived().map((l) => [l.entry.id, l.reason])).toEqual([['old', 'max-age']]);
  }, 120_000);
});
