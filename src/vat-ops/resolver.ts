import { randomUUID } from 'node:crypto';
import { parseRecordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { RecordStore } from '../queue/record-state.js';
import type { Requeuer } from '../queue/requeue.js';
import type { VatLedger } from '../queue/vat-ledger.js';

/**
 * Nothing waits forever (docs/vat.md, "Unknown outcomes"): an open ledger entry (in flight past its
 * lease, unknown, or a claim released as not processed) is normally settled by its record's job,
 * which sends (or resends the same body) with backoff. When that job is gone (it ran out of
 * attempts, or a crash lost it) the entry would stay open for ever; this sweep finds such entries
 * in the open index and puts their record's newest version back on the vat-submissions queue, with
 * backoff per entry. The job then resends, and
 * after TAXSYNC_VAT_UNKNOWN_LIMIT resends dead-letters the entry as VAT_OUTCOME_UNRESOLVED.
 * Every VAT worker process schedules it; a lease in Redis lets one of them sweep per interval.
 */
export interface VatResolver {
  /** One sweep; `busy` when another process holds this interval's lease. */
  sweep(): Promise<{ busy: boolean; requeued: number; postponed: number }>;
}

export interface VatResolverDeps {
  ledger: Pick<VatLedger, 'due' | 'byKey' | 'postpone'>;
  records: Pick<RecordStore, 'reopen'>;
  requeuer: Pick<Requeuer, 'ensureQueued' | 'hasPendingJob'>;
  redis: RedisClient;
  keys: Keys;
  /** How often the sweep runs (TAXSYNC_VAT_RESOLVER_INTERVAL_MS): also the lease's length. */
  intervalMs: number;
  /** Re-queues of one entry back off from baseMs, doubling per resend, up to capMs. */
  backoff: { baseMs: number; capMs: number };
  clock?: () => number;
  /** Entries looked at per sweep. @defaultValue 500 */
  batch?: number;
}

// Pending: a claim released as certainly not processed (a refused connection, no token, a 401)
// whose job may have run out of attempts meanwhile.
const OPEN: ReadonlySet<string> = new Set(['in_flight', 'unknown', 'pending']);

export function createVatResolver(deps: VatResolverDeps): VatResolver {
  const clock = deps.clock ?? Date.now;
  const leaseKey = `${deps.keys.prefix}:vat-resolver-lease`;
  return {
    async sweep() {
      const now = clock();
      // Not released at the end: one sweep per interval across every process.
      const lease = await deps.redis.set(leaseKey, randomUUID(), 'PX', deps.intervalMs, 'NX');
      if (lease === null) return { busy: true, requeued: 0, postponed: 0 };
      let requeued = 0;
      let postponed = 0;
      for (const key of await deps.ledger.due(now, deps.batch ?? 500)) {
        const entry = await deps.ledger.byKey(key);
        let record: RecordKey | undefined;
        try {
          record = entry?.record === undefined ? undefined : parseRecordKeyString(entry.record);
        } catch {
          record = undefined;
        }
        if (entry === undefined || record === undefined || !OPEN.has(entry.state)) {
          // Settled meanwhile (settle takes it out of the index) or unreadable: look again much later.
          await deps.ledger.postpone(key, now + deps.backoff.capMs);
          postponed += 1;
          continue;
        }
        if (await deps.requeuer.hasPendingJob(record)) {
          // Its job is waiting, delayed or running: that job resolves it.
          await deps.ledger.postpone(key, now + deps.intervalMs);
          postponed += 1;
          continue;
        }
        await deps.records.reopen(record);
        await deps.requeuer.ensureQueued(record);
        // Backs off per resend of an unknown outcome, and per attempt of a pending claim (one whose
        // credentials stay refused is tried again at most once per capMs) — or, for a claim whose
        // record now fails before it claims anything (a version that cannot be mapped), by as long
        // as it has stood unchanged.
        const tries = entry.state === 'pending' ? entry.attempts : entry.resends;
        const unchangedFor = entry.state === 'pending' && entry.updated_at !== undefined ? now - Date.parse(entry.updated_at) : 0;
        const delay = Math.min(deps.backoff.capMs, Math.max(deps.backoff.baseMs * 2 ** Math.min(tries, 30), Number.isFinite(unchangedFor) ? unchangedFor : 0));
        await deps.ledger.postpone(key, now + Math.max(delay, deps.intervalMs));
        requeued += 1;
      }
      return { busy: false, requeued, postponed };
    },
  };
}

/** Runs the sweep every interval in a worker process; stops on shutdown (a sweep in progress is awaited). */
export function scheduleVatResolver(resolver: VatResolver, options: { intervalMs: number; logger: Logger; lifecycle: ShutdownHooks }): void {
  const logger = options.logger.child({ task: 'vat resolver' });
  let running: Promise<void> | undefined;
  const tick = (): void => {
    if (running) return;
    running = resolver
      .sweep()
      .then(
        (result) => {
          if (result.requeued > 0) logger.warn({ requeued: result.requeued }, 'VAT submissions with an open outcome had lost their job: re-queued');
        },
        (error: unknown) => logger.error({ err: error }, 'VAT resolver sweep failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  options.lifecycle.onShutdown('vat resolver', async () => {
    clearInterval(timer);
    await running;
  });
}

/** Where a stop is registered (the daemon's lifecycle; it runs at shutdown). */
interface ShutdownHooks {
  onShutdown(name: string, close: () => Promise<void>): void;
}
