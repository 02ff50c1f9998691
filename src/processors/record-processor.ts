import { createHash } from 'node:crypto';
import { DelayedError, Worker, type Job, type Queue } from 'bullmq';
import type { RedisClient } from '../queue/connection.js';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Logger } from '../observability/logger.js';
import type { JobOutcome } from '../observability/metrics.js';
import type { DeadLetterStore } from '../queue/dead-letter.js';
import { enqueueRecord } from '../queue/enqueue.js';
import { recordOfJob } from '../queue/jobs.js';
import type { Keys } from '../queue/keys.js';
import type { RecordState, RecordStore } from '../queue/record-state.js';
import { withScripts } from '../queue/redis-scripts.js';
import { appendTraces, type TraceEntry, type TraceSettings } from '../queue/trace.js';
import type { HandlerContext, HandlerOutcome, RecordHandler } from './types.js';
import { createWaitingIndex, describeAge } from './waiting.js';

export interface WaitPolicy {
  /** How long a record may wait for what it needs before it is dead-lettered (WAITING_EXPIRED). */
  deadlineMs: number;
  /**
   * How long a refund (or its VAT correction) waits for its original before it is dead-lettered as
   * REFUND_ORIGINAL_MISSING (TAXSYNC_REFUND_WAIT). @defaultValue 30 minutes
   */
  refundDeadlineMs?: number;
  /** First re-check after this long; later ones wait about as long as already waited, up to capMs. */
  baseMs: number;
  capMs: number;
}

export const DEFAULT_REFUND_WAIT_MS = 30 * 60_000;
/** The longest a 429's Retry-After pauses a queue (docs/errors.md, API_RATE_LIMITED). */
export const MAX_RATE_LIMIT_PAUSE_MS = 15 * 60_000;
export const DEFAULT_WAIT: WaitPolicy = { deadlineMs: 24 * 3600_000, refundDeadlineMs: DEFAULT_REFUND_WAIT_MS, baseMs: 5_000, capMs: 30 * 60_000 };

/** A job's BullMQ lock and token: a write is marked only while the job still holds it. */
type Fence = { lockKey: string; token: string };

export interface RecordProcessorDeps {
  queue: Queue;
  handler: RecordHandler;
  records: RecordStore;
  deadLetters: DeadLetterStore;
  redis: RedisClient;
  keys: Keys;
  trace: TraceSettings;
  logger: Logger;
  wait?: WaitPolicy;
  /** Versions applied in one job before it yields to other records. */
  maxLoops?: number;
  /**
   * The coalescing window (TAXSYNC_COALESCE_MS): a record updated again within `windowMs` of its
   * previous update is sent once no update has arrived for `windowMs`, or once its job is `maxMs`
   * old (TAXSYNC_COALESCE_MAX_MS), whichever comes first. 0 (the default here) sends at once.
   */
  coalesce?: { windowMs: number; maxMs: number };
  /** The pause when a 429 gives no Retry-After, and the shortest one whatever it says. @defaultValue 1000 */
  rateLimitFallbackMs?: number;
  /** A refund whose invoice is locked by another refund tries again after about this long. @defaultValue 1000 */
  busyRetryMs?: number;
  clock?: () => Date;
  random?: () => number;
  /** Told how each job run ended (metrics); never changes what the processor does. */
  onOutcome?: (queue: string, outcome: JobOutcome) => void;
  /** Told of each write accepted whose tax engine id stayed unknown (metrics). */
  onIdUnknown?: (queue: string) => void;
  /** Told of each write not sent because its body is the one last accepted (metrics). */
  onUnchanged?: (queue: string) => void;
}

/** `taken-over`: the job lost its lock while it worked; the worker holding the record now sends it again. */
export type ProcessResult = 'applied' | 'nothing-new' | 'dead-lettered' | 'taken-over';

/** The codes of a wait that ran out: what the version waited for never came. */
const WAITING_CODES: ReadonlySet<string> = new Set(['WAITING_EXPIRED', 'REFUND_ORIGINAL_MISSING']);

/**
 * The loop every record queue runs: read the newest state, let the handler call the API, mark the
 * version applied, and go again while newer events arrived meanwhile (so an update that lands
 * while its record's job runs is sent right after, never lost). Failures follow DESIGN.md's table:
 * transient → BullMQ retries with backoff; 429 → the whole queue pauses; waiting → the job re-checks
 * later within a deadline; everything final → a dead-letter entry.
 */
export function createRecordProcessor(deps: RecordProcessorDeps): (job: Job, token?: string) => Promise<ProcessResult> {
  const clock = deps.clock ?? (() => new Date());
  const random = deps.random ?? Math.random;
  const wait = deps.wait ?? DEFAULT_WAIT;
  const maxLoops = deps.maxLoops ?? 5;
  const busyRetryMs = deps.busyRetryMs ?? 1_000;
  const waiting = createWaitingIndex(deps.redis, deps.keys);
  const report = (outcome: JobOutcome): void => {
    try {
      deps.onOutcome?.(deps.queue.name, outcome);
    } catch {
      // Metrics never fail a job.
    }
  };

  /**
   * Writes `held` (lines kept back, oldest first, emptied) and then `entry`. The 'sent' line is
   * held back and written with whatever comes next (usually the 'answered' line in markApplied's
   * transaction), so a job's hot path has one Redis round trip for its trace. A worker that dies
   * during the call loses only that line; the job itself is recovered.
   */
  async function trace(record: RecordKey, entry: Omit<TraceEntry, 'at'>, held: TraceEntry[] = []): Promise<void> {
    await appendTraces(withScripts(deps.redis), deps.keys, recordKeyString(record), [...held.splice(0), { at: clock().toISOString(), ...entry }], deps.trace);
  }

  /**
   * The same version dead-lettered twice for the same reason (a crash between two writes) is one
   * entry: its id is derived. The code is part of it: a version run again later (a refund decided
   * again once its invoice files VAT, a VAT record re-queued by the resolver) can fail differently,
   * and that entry must not be dropped because the first one holds the id (BullMQ ignores the add).
   */
  function entryId(job: Job, record: RecordKey | null, state: RecordState | undefined, code: string): string {
    return createHash('sha256')
      .update(`${deps.queue.name}\0${record ? recordKeyString(record) : job.id}\0${state?.seq ?? 0}\0${code}`)
      .digest('hex')
      .slice(0, 32);
  }

  /** `kept`: the version's applied copy when the handler gave one (HandlerContext.keep). */
  async function deadLetter(job: Job, record: RecordKey | null, state: RecordState | undefined, error: TaxsyncError, held: TraceEntry[] = [], kept?: string, fence?: Fence): Promise<void> {
    const now = clock().toISOString();
    const entry = await deps.deadLetters.add({
      id: entryId(job, record, state, error.code),
      queue: deps.queue.name,
      record,
      event: state?.eventJson ? (JSON.parse(state.eventJson) as unknown) : null,
      error: {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        ...(error.fields ? { fields: error.fields } : {}),
      },
      http: error.http ?? null,
      attempts: job.attemptsMade + 1,
      first_failed_at: state?.firstFailedAt ?? now,
      last_failed_at: now,
    });
    if (record && state && !WAITING_CODES.has(error.code)) {
      // This version got past a wait it once gave up on (what it waited for came, and it was run
      // again): that entry is obsolete, and replaying it as its message says would decide the
      // version once more (a refund's correction stated twice). Removed after the new entry is in.
      await deps.deadLetters.remove([...WAITING_CODES].map((code) => entryId(job, record, state, code)));
    }
    if (record && state) {
      const marked = await deps.records.markApplied(record, state.seq, state.event, clock(), {
        ...(fence ? { fence } : {}),
        // create_pending stays: a create whose answer was lost may have made the exemption, and
        // the next write of the record (its replay too) must look for it before creating again.
        fields: { first_failed_at: null, waiting_since: null, sent_hash: null },
        ...(state.eventJson === undefined ? {} : { eventJson: state.eventJson }),
        ...(kept === undefined ? {} : { kept }),
        trace: {
          entries: [...held.splice(0), { at: now, step: 'dead-lettered', code: error.code, detail: `${error.message} (entry ${entry.id})` }],
          settings: deps.trace,
        },
      });
      if (marked === 'fenced') await sendAgain(job, record, true);
      else if (state.waitingSince !== undefined) await waiting.stop(record);
    }
    deps.logger.warn({ jobId: job.id, code: error.code, deadLetterId: entry.id, ...(record ?? {}) }, 'dead-lettered');
  }

  /**
   * This job lost its lock while it worked (its process frozen longer than the lock, or cut off
   * from Redis while it reached the API), and BullMQ gave the record's job to another worker: this
   * job's write may have landed after that worker's newer one. The newest version is made a new
   * version (already done when the mark was refused: `marked`) and the record's job queued (BullMQ
   * ignores the add while the other worker still holds it: its mark then finds the new version and
   * sends it again, after this write).
   */
  async function sendAgain(job: Job, record: RecordKey, marked: boolean): Promise<ProcessResult> {
    if (!marked) await deps.records.takenOver(record);
    await enqueueRecord(deps.queue, record, { retry: { attempts: job.opts.attempts ?? 1, baseMs: 0, capMs: 0 } });
    deps.logger.warn({ jobId: job.id, queue: deps.queue.name, source: record.source, external_id: record.external_id }, 'job taken over by another worker: its record is sent again');
    return 'taken-over';
  }

  async function onFailure(
    job: Job,
    token: string | undefined,
    record: RecordKey,
    state: RecordState,
    thrown: unknown,
    held: TraceEntry[],
    kept: string | undefined,
    fence: Fence | undefined,
  ): Promise<ProcessResult> {
    // A failed write may still have landed (a timeout): if another worker holds the record by now,
    // it is sent again after it, instead of this job retrying or dead-lettering a version it no longer owns.
    if (fence && (await deps.redis.get(fence.lockKey)) !== fence.token) return sendAgain(job, record, false);
    const error = isTaxsyncError(thrown)
      ? thrown
      : new TaxsyncError('INTERNAL_ERROR', `unexpected error: ${(thrown as Error)?.message ?? String(thrown)}`, { cause: thrown });
    // A failed call may still have been applied (a timeout, a reset): the body last accepted is no
    // longer known, so the next version is sent even when it equals that body (skip unchanged).
    if (state.firstFailedAt === undefined || state.sentHash !== undefined) {
      await deps.records.setFields(record, {
        ...(state.firstFailedAt === undefined ? { first_failed_at: clock().toISOString() } : {}),
        ...(state.sentHash === undefined ? {} : { sent_hash: null }),
      });
    }

    if (error.code === 'API_RATE_LIMITED') {
      // Never shorter than the pause without Retry-After: a `Retry-After: 0` (or a date already
      // past) from a service that still limits would otherwise retry at once, again and again, and
      // Redis refuses a pause of 0 ms (SET … PX 0), which failed the job instead of pausing.
      const fallbackMs = deps.rateLimitFallbackMs ?? 1_000;
      const askedMs = Math.max(error.retryAfterMs ?? fallbackMs, fallbackMs, 1);
      // Never longer than MAX_RATE_LIMIT_PAUSE_MS: a Retry-After of days (a misconfigured gateway)
      // would stop the whole queue that long; a service still limiting answers 429 again then.
      const pauseMs = Math.min(askedMs, MAX_RATE_LIMIT_PAUSE_MS);
      const capped = pauseMs < askedMs ? ` (Retry-After asked ${Math.round(askedMs / 1000)} s; capped)` : '';
      await trace(record, { step: 'retry', code: error.code, detail: `rate limited: queue paused ${pauseMs} ms${capped}` }, held);
      // Slows the whole queue, not just this job; the job goes back without using an attempt.
      await deps.queue.rateLimit(pauseMs);
      report('rate-limited');
      throw Worker.RateLimitError();
    }
    if (error.code === 'RECORD_BUSY') {
      // Another refund of the same invoice holds the lock (which expires by itself, also when its
      // holder died): try again shortly without using an attempt, so a lock left by a killed
      // worker never dead-letters a refund.
      const delay = Math.round(busyRetryMs / 2 + (random() * busyRetryMs) / 2);
      await trace(record, { step: 'retry', code: error.code, detail: `${error.message}; trying again in ${delay} ms` }, held);
      await job.moveToDelayed(clock().getTime() + delay, token);
      report('retried');
      throw new DelayedError();
    }
    const attempts = job.opts.attempts ?? 1;
    if (error.retryable && job.attemptsMade + 1 < attempts) {
      await trace(record, { step: 'retry', code: error.code, detail: `attempt ${job.attemptsMade + 1} of ${attempts}: ${error.message}` }, held);
      deps.logger.info({ jobId: job.id, code: error.code, attempt: job.attemptsMade + 1 }, 'will retry');
      report('retried');
      throw error;
    }
    await deadLetter(job, record, state, error, held, kept, fence);
    return 'dead-lettered';
  }

  async function waitLater(
    job: Job,
    token: string | undefined,
    record: RecordKey,
    state: RecordState,
    outcome: Extract<HandlerOutcome, { kind: 'wait' }>,
    held: TraceEntry[],
    kept: string | undefined,
  ): Promise<ProcessResult> {
    const now = clock().getTime();
    const since = state.waitingSince ?? now;
    const forOriginal = outcome.missing?.what === 'original' || outcome.missing?.what === 'invoice';
    const deadlineMs = forOriginal ? (wait.refundDeadlineMs ?? DEFAULT_REFUND_WAIT_MS) : wait.deadlineMs;
    if (now - since >= deadlineMs) {
      await deadLetter(job, record, state, expired(job, record, state, outcome, now - since, forOriginal), held, kept);
      return 'dead-lettered';
    }
    if (state.waitingSince === undefined) await deps.records.setFields(record, { waiting_since: String(now) });
    await waiting.start(record, since, outcome.reason, outcome.missing);
    const bound = Math.min(wait.capMs, Math.max(wait.baseMs, now - since));
    // The last re-check falls on the deadline, so the dead letter comes when it says, not a whole pause later.
    const delay = Math.min(Math.round(bound / 2 + (random() * bound) / 2), deadlineMs - (now - since) + 1);
    await trace(record, { step: 'waiting', detail: `${outcome.reason}; re-checking in ${Math.round(delay / 1000)} s` }, held);
    await job.moveToDelayed(now + delay, token);
    report('waiting');
    throw new DelayedError();
  }

  /** The dead letter of a wait past its deadline: a refund's names its original and how to supply it. */
  function expired(
    job: Job,
    record: RecordKey,
    state: RecordState,
    outcome: Extract<HandlerOutcome, { kind: 'wait' }>,
    waitedMs: number,
    forOriginal: boolean,
  ): TaxsyncError {
    const waited = describeAge(Math.round(waitedMs / 1000));
    const missing = outcome.missing;
    if (!forOriginal || missing === undefined) return new TaxsyncError('WAITING_EXPIRED', `${outcome.reason}; gave up after ${waited}`);
    const original = `${missing.record.source}/${missing.record.external_id}`;
    const which = missing.what === 'original' ? 'original' : 'invoice';
    return new TaxsyncError(
      'REFUND_ORIGINAL_MISSING',
      `${outcome.reason}; ${record.source}/${record.external_id} gave up after ${waited} (TAXSYNC_REFUND_WAIT) waiting for its ${which} ${original}, ` +
        `which never arrived: send the ${which} to taxsync (the platform's resend of its webhook, or \`taxsync ingest <file>\`), ` +
        `then \`taxsync dlq replay ${entryId(job, record, state, 'REFUND_ORIGINAL_MISSING')}\``,
      { fields: { [which]: [`${missing.record.kind} ${original} is missing`] }, details: { missing: missing.record } },
    );
  }

  /**
   * When the job should run again because its record is in a burst, or undefined to send now. A
   * record is in a burst when its newest event came within the window of the one before; it is
   * sent once the window after its newest event has passed with no update. A lone update (the
   * first of a burst too) is sent at once: the window costs latency only to records updated again
   * and again. The job's own age bounds the wait: its timestamp is when an update queued it (a
   * delayed job keeps it).
   */
  function coalesceUntil(job: Job, state: RecordState, now: number): number | undefined {
    const windowMs = deps.coalesce?.windowMs ?? 0;
    if (windowMs <= 0 || state.receivedAt <= 0 || state.prevReceivedAt <= 0 || state.receivedAt - state.prevReceivedAt >= windowMs) return undefined;
    const quietAt = state.receivedAt + windowMs;
    const latest = job.timestamp + (deps.coalesce?.maxMs ?? 0);
    if (quietAt <= now || latest <= now) return undefined;
    return Math.min(quietAt, latest);
  }

  return async function processRecordJob(job: Job, token?: string): Promise<ProcessResult> {
    const result = await run(job, token);
    report(result);
    return result;
  };

  async function run(job: Job, token?: string): Promise<ProcessResult> {
    const of = recordOfJob(job);
    if (!('record' in of)) {
      await deadLetter(job, null, undefined, new TaxsyncError('JOB_INVALID', `job ${job.id} has unreadable data: ${of.problem}`));
      return 'dead-lettered';
    }
    const record = of.record;
    // VAT submissions are fenced by their own ledger (docs/vat.md).
    const fence: Fence | undefined = token !== undefined && job.id !== undefined && record.kind !== 'vat' ? { lockKey: `${deps.queue.toKey(job.id)}:lock`, token } : undefined;
    // Made only when a handler logs: a child logger per job is measurable CPU on the hot path.
    let logger: Logger | undefined;
    const jobLogger = (): Logger =>
      (logger ??= deps.logger.child({ jobId: job.id, queue: deps.queue.name, source: record.source, external_id: record.external_id }));
    const sendsHeldEvent = deps.handler.sendsHeldEvent ?? [];
    for (let loop = 0; ; loop++) {
      const readAt = clock().getTime();
      // The same numbers as coalesceUntil below: the read makes the version the applied copy only when it goes out now.
      const state = await deps.records.read(
        record,
        sendsHeldEvent.length === 0
          ? undefined
          : { types: sendsHeldEvent, nowMs: readAt, windowMs: deps.coalesce?.windowMs ?? 0, latestMs: job.timestamp + (deps.coalesce?.maxMs ?? 0) },
      );
      if (state.seq <= state.appliedSeq) {
        if (loop === 0) await trace(record, { step: 'coalesced', detail: 'nothing newer than the version already applied' });
        return loop === 0 ? 'nothing-new' : 'applied';
      }
      if (!state.event) {
        await deadLetter(job, record, state, new TaxsyncError('JOB_INVALID', 'the newest event of this record cannot be read back'));
        return 'dead-lettered';
      }
      const settleAt = state.sendingDone ? undefined : coalesceUntil(job, state, readAt);
      if (settleAt !== undefined) {
        // Updates still arriving: wait for the record to go quiet, then send its latest state once.
        await job.moveToDelayed(settleAt, token);
        report('coalescing');
        throw new DelayedError();
      }
      const held: TraceEntry[] = [
        { at: clock().toISOString(), step: 'sent', event_id: state.event.id, occurred_at: state.event.occurred_at, detail: state.event.type },
      ];
      let kept: string | undefined;
      let sent = false;
      const ctx: HandlerContext = {
        record,
        state,
        get logger() {
          return jobLogger();
        },
        trace: (entry) => trace(record, entry, held),
        keep(event) {
          kept = event === null ? (state.appliedJson ?? '') : JSON.stringify(event);
        },
        async sending(options = {}) {
          if (sent) return;
          sent = true;
          // Done by the job's read (RecordHandler.sendsHeldEvent) for a write of the held event.
          if (state.sendingDone && !options.keepCopy && kept === undefined) return;
          await deps.records.sending(record, state.seq, {
            ...(options.keepCopy || kept === '' ? { clearOnly: true } : kept === undefined ? {} : { copy: kept }),
            ...(state.eventJson === undefined ? {} : { eventJson: state.eventJson }),
          });
        },
      };
      let outcome;
      try {
        outcome = await deps.handler(state.event, ctx);
      } catch (error) {
        if (error instanceof DelayedError || (error as Error)?.name === 'RateLimitError') throw error;
        return onFailure(job, token, record, state, error, held, kept, fence);
      }
      if (outcome.kind === 'wait') return waitLater(job, token, record, state, outcome, held, kept);
      if (outcome.idUnknown) {
        // Applied all the same (never resent blindly); the state keeps no id that could be stale,
        // and an exemption's pending-create mark stays so its next write looks for it first.
        jobLogger().warn({ status: outcome.status }, 'write accepted, tax engine id unknown');
        try {
          deps.onIdUnknown?.(deps.queue.name);
        } catch {
          // Metrics never fail a job.
        }
      }

      if (outcome.unchanged) {
        // Nothing went out: the held 'sent' line is dropped, the trace says why.
        held.pop();
        try {
          deps.onUnchanged?.(deps.queue.name);
        } catch {
          // Metrics never fail a job.
        }
      }
      const now = clock();
      const hash = outcome.sentHash === undefined ? {} : { sent_hash: outcome.sentHash };
      const newer = await deps.records.markApplied(record, state.seq, state.event, now, {
        ...(fence ? { fence } : {}),
        fields: outcome.idUnknown
          ? { first_failed_at: null, waiting_since: null, tax_id: null, ...hash }
          : {
              first_failed_at: null,
              waiting_since: null,
              create_pending: null,
              ...(outcome.taxId ? { tax_id: outcome.taxId } : {}),
              ...hash,
            },
        ...(state.eventJson === undefined ? {} : { eventJson: state.eventJson }),
        ...(kept === undefined ? {} : { kept }),
        ...(outcome.alsoOnApplied ? { also: outcome.alsoOnApplied } : {}),
        trace: {
          entries: [
            ...held.splice(0),
            {
              at: now.toISOString(),
              step: outcome.unchanged ? 'unchanged' : 'answered',
              event_id: state.event.id,
              ...(outcome.status ? { status: outcome.status } : {}),
              detail: outcome.detail,
            },
          ],
          settings: deps.trace,
        },
      });
      if (newer === 'fenced') return sendAgain(job, record, true);
      if (state.waitingSince !== undefined) await waiting.stop(record);
      if (newer === 0) return 'applied';
      if (loop + 1 >= maxLoops) {
        // A record updated faster than we send: yield so other records get their turn.
        await job.moveToDelayed(clock().getTime(), token);
        report('yielded');
        throw new DelayedError();
      }
    }
  }
}
