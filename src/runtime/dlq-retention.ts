import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DeadLetterEntry, DeadLetterStore } from '../queue/dead-letter.js';
import { newestFirst } from './dlq-filter.js';

/**
 * Dead-letter retention (docs/operations.md, "Retention"). By default entries stay until an
 * operator handles them. With a cap (`TAXSYNC_DLQ_MAX_ENTRIES`) and/or an age limit
 * (`TAXSYNC_DLQ_MAX_AGE_DAYS`, by last failure), the entries beyond them are FIRST appended to a
 * JSON-lines archive file and only then removed, with a log line: nothing disappears without a
 * trace. When the archive cannot be written, nothing is removed.
 */
export interface RetentionSettings {
  /** Keep at most this many entries (the newest failures); 0 = no cap. */
  maxEntries: number;
  /** Remove entries whose last failure is older than this many days; 0 = no limit. */
  maxAgeDays: number;
}

export interface RetentionResult {
  /** Entries archived and removed. */
  removed: number;
  /** Of those, over the age limit (the rest were over the cap). */
  byAge: number;
  byCap: number;
  /** Entries left in the queue. */
  kept: number;
  archivePath: string;
}

/** One archive line: the entry as it was, why it went, when. */
export interface ArchivedEntry {
  archived_at: string;
  reason: 'max-age' | 'max-entries';
  entry: DeadLetterEntry;
}

interface RetentionLogger {
  info(obj: object, msg: string): void;
}

/** `<TAXSYNC_DATA_DIR>/dead-letter-archive.jsonl` unless `TAXSYNC_DLQ_ARCHIVE` names a file. */
export function defaultArchivePath(dataDir: string): string {
  return join(dataDir, 'dead-letter-archive.jsonl');
}

/** PURE: which entries retention removes, and why (age first, then the oldest beyond the cap). */
export function selectExpired(entries: readonly DeadLetterEntry[], settings: RetentionSettings, now: Date): { entry: DeadLetterEntry; reason: ArchivedEntry['reason'] }[] {
  const sorted = [...entries].sort(newestFirst);
  const cutoff = settings.maxAgeDays > 0 ? now.getTime() - settings.maxAgeDays * 86_400_000 : undefined;
  const out: { entry: DeadLetterEntry; reason: ArchivedEntry['reason'] }[] = [];
  let kept = 0;
  for (const entry of sorted) {
    const at = Date.parse(entry.last_failed_at);
    if (cutoff !== undefined && at < cutoff) out.push({ entry, reason: 'max-age' });
    else if (settings.maxEntries > 0 && kept >= settings.maxEntries) out.push({ entry, reason: 'max-entries' });
    else kept += 1;
  }
  return out;
}

/** Appends the lines and flushes them to disk before returning; throws when any part fails. */
async function appendDurably(path: string, lines: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const file = await open(path, 'a', 0o600);
  try {
    await file.writeFile(lines, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
}

/** Runs retention once: archive first, then remove. An archive failure throws and removes nothing. */
export async function applyRetention(
  store: Pick<DeadLetterStore, 'all' | 'remove'>,
  settings: RetentionSettings,
  archivePath: string,
  logger: RetentionLogger,
  clock: () => Date = () => new Date(),
): Promise<RetentionResult> {
  const now = clock();
  const result: RetentionResult = { removed: 0, byAge: 0, byCap: 0, kept: 0, archivePath };
  const all: DeadLetterEntry[] = [];
  for await (const entry of store.all()) all.push(entry);
  const expired = selectExpired(all, settings, now);
  result.kept = all.length - expired.length;
  if (expired.length === 0) return result;

  const archivedAt = now.toISOString();
  const lines = expired.map(({ entry, reason }) => `${JSON.stringify({ archived_at: archivedAt, reason, entry } satisfies ArchivedEntry)}\n`).join('');
  try {
    await appendDurably(archivePath, lines);
  } catch (error) {
    throw new Error(`dead-letter retention: cannot write the archive ${archivePath} (${(error as Error).message}); nothing removed`);
  }
  await store.remove(expired.map(({ entry }) => entry.id));
  result.removed = expired.length;
  result.byAge = expired.filter((e) => e.reason === 'max-age').length;
  result.byCap = result.removed - result.byAge;
  logger.info(
    { removed: result.removed, byAge: result.byAge, byCap: result.byCap, kept: result.kept, archive: archivePath },
    `dead-letter retention: ${result.removed} entries archived to ${archivePath} and removed`,
  );
  return result;
}
