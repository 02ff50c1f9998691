import { randomUUID } from 'node:crypto';
import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RedisClient } from '../queue/connection.js';
import type { DeadLetterEntry, DeadLetterStore } from '../queue/dead-letter.js';
import type { Keys } from '../queue/keys.js';
import { releaseLock, renewLock } from '../queue/lease.js';
import { newestFirst } from './filter.js';

/**
 * Dead-letter retention (docs/operations.md, "Retention and the archive"). By default entries stay
 * until an operator handles them. With a cap (`TAXSYNC_DLQ_MAX_ENTRIES`) and/or an age limit
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
  /** Another process held the retention lease: nothing was read, archived or removed. */
  busy?: boolean;
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

export interface RetentionDeps {
  deadLetters: Pick<DeadLetterStore, 'all' | 'removeTo'>;
  /**
   * A connection nobody else uses while retention runs: the removal is a WATCHed transaction, and
   * WATCH belongs to the connection (another user's EXEC would silently drop it).
   */
  redis: RedisClient;
  keys: Pick<Keys, 'dlqRetentionLease' | 'counters'>;
  logger: RetentionLogger;
  clock?: () => Date;
  /** How long the lease holds without renewal. @defaultValue 5 min */
  leaseMs?: number;
}

/** The `{prefix}:counters` field counting archived entries by reason (metrics mirror it). */
export const archivedCounter = (reason: ArchivedEntry['reason']): string => `dead_letter_archived:${reason}`;

const DEFAULT_LEASE_MS = 5 * 60_000;

/**
 * Runs retention once: archive first, then remove. Only one process at a time (a Redis lease):
 * while another holds it this returns `busy` and touches nothing, so several `taxsync work`
 * processes (and `taxsync dlq prune`) never archive an entry twice. The lease is renewed just
 * before the archive is written, and the removal commits only while it is still held. An archive
 * failure throws and removes nothing.
 */
export async function applyRetention(deps: RetentionDeps, settings: RetentionSettings, archivePath: string): Promise<RetentionResult> {
  const now = (deps.clock ?? (() => new Date()))();
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const result: RetentionResult = { removed: 0, byAge: 0, byCap: 0, kept: 0, archivePath };
  const lease = deps.keys.dlqRetentionLease;
  const token = randomUUID();
  if ((await deps.redis.set(lease, token, 'PX', leaseMs, 'NX')) !== 'OK') return { ...result, busy: true };
  try {
    const all: DeadLetterEntry[] = [];
    for await (const entry of deps.deadLetters.all()) all.push(entry);
    const expired = selectExpired(all, settings, now);
    result.kept = all.length - expired.length;
    if (expired.length === 0) return result;

    // Reading may have been slow: hold the lease afresh for the archive and the removal.
    // Renewed, or released below, only while this process still holds it (its token).
    if (!(await renewLock(deps.redis, lease, token, leaseMs))) return { ...result, busy: true };
    const archivedAt = now.toISOString();
    const lines = expired.map(({ entry, reason }) => `${JSON.stringify({ archived_at: archivedAt, reason, entry } satisfies ArchivedEntry)}\n`).join('');
    try {
      await appendDurably(archivePath, lines);
    } catch (error) {
      throw new Error(`dead-letter retention: cannot write the archive ${archivePath} (${(error as Error).message}); nothing removed`);
    }
    result.removed = expired.length;
    result.byAge = expired.filter((e) => e.reason === 'max-age').length;
    result.byCap = result.removed - result.byAge;

    // Only while the lease is still ours (WATCH: an expiry or a new holder aborts the EXEC).
    const lost = () => new Error(`dead-letter retention: lost the lease after archiving ${result.removed} entries to ${archivePath}; nothing removed (the next run archives them again)`);
    await deps.redis.watch(lease);
    if ((await deps.redis.get(lease)) !== token) {
      await deps.redis.unwatch();
      throw lost();
    }
    const multi = deps.redis.multi();
    for (const { entry } of expired) deps.deadLetters.removeTo(multi, entry.id);
    if (result.byAge > 0) multi.hincrby(deps.keys.counters, archivedCounter('max-age'), result.byAge);
    if (result.byCap > 0) multi.hincrby(deps.keys.counters, archivedCounter('max-entries'), result.byCap);
    const exec = await multi.exec();
    if (exec === null) throw lost();
    for (const [error] of exec) if (error) throw error;
    deps.logger.info(
      { removed: result.removed, byAge: result.byAge, byCap: result.byCap, kept: result.kept, archive: archivePath },
      `dead-letter retention: ${result.removed} entries archived to ${archivePath} and removed`,
    );
    return result;
  } finally {
    await releaseLock(deps.redis, lease, token).catch(() => undefined);
  }
}
