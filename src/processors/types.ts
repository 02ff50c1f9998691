import type { AppliedWrites } from '../queue/record-state.js';
import type { CanonicalEvent } from '../domain/events.js';
import type { RecordKey } from '../domain/record-key.js';
import type { Logger } from '../observability/logger.js';
import type { RecordState } from '../queue/record-state.js';
import type { TraceEntry } from '../queue/trace.js';

/** What a waiting record waits for: indexed (`taxsync status`, the web view) and named in its dead letter. */
export interface Missing {
  record: RecordKey;
  /** `original` (a refund's invoice, tax engine) and `invoice` (a refund's VAT correction) wait TAXSYNC_REFUND_WAIT. */
  what: 'original' | 'customer' | 'invoice';
}

/** What a handler reports after doing the API work for one version of a record. */
export type HandlerOutcome =
  | {
      kind: 'done';
      detail: string;
      status?: number;
      taxId?: string;
      /**
       * The service accepted the write (2xx) but its id could not be learned (the answer had none
       * readable, nor had a read back): the record is applied, its state keeps no tax engine id,
       * and an exemption's pending-create mark stays so its next write looks for it first.
       */
      idUnknown?: boolean;
      /** sentHash() of the body the service accepted (kept as the record's `sent_hash`); null clears it (a deletion). */
      sentHash?: string | null;
      /** No call was made: the body equals the one last accepted (skip unchanged, counted apart). */
      unchanged?: boolean;
      /**
       * Writes that go in the same step as the version's mark as applied (the tax variance of an
       * invoice): one round trip and one script for the job's bookkeeping.
       */
      alsoOnApplied?: (writes: AppliedWrites) => void;
    }
  /**
   * Something it needs is not there yet (a refund's invoice, an exemption's customer). `missing`
   * names what and where, when taxsync has never seen it (the record processor indexes it and
   * picks the dead-letter code when the wait runs out).
   */
  | { kind: 'wait'; reason: string; missing?: Missing };

export interface HandlerContext {
  record: RecordKey;
  state: RecordState;
  logger: Logger;
  trace(entry: Omit<TraceEntry, 'at'>): Promise<void>;
  /**
   * Called right before a write to this record goes out (once per version): its `sent_hash` is
   * cleared, so a job stopped after the service applied the write but before the version was
   * marked leaves no hash of an older body behind (skip unchanged sends the next version whatever
   * its body; the mark writes the new hash), and the version becomes the record's applied copy
   * (`state.appliedEvent`): what the engine may hold from now on, which the next version is built
   * on (a cancellation laid over it) even when this one's answer is lost. `keepCopy`: a deletion,
   * which leaves the copy of what it deletes (a refund's invoice is read from it).
   */
  sending(options?: { keepCopy?: boolean }): Promise<void>;
  /**
   * What to keep as this version's applied copy when it is not the event as received: a partial
   * cancellation laid over the version before it, so a later cancellation or a replay of this one
   * still has the whole document; `null` keeps the copy there is (a cancellation dropped because
   * the engine never held the record must not become a version it holds). Call before `sending()`.
   */
  keep(event: CanonicalEvent | null): void;
}

/**
 * Does the API work for the newest event of a record. Throws a TaxsyncError on failure (its code
 * and retry decision drive what happens next); never decides about retries itself.
 */
export type RecordHandler = ((event: CanonicalEvent, ctx: HandlerContext) => Promise<HandlerOutcome>) & {
  /**
   * The event types this handler, whenever it writes, writes as held: `sending()` without
   * `keepCopy`, never `keep()`, and never a `wait` outcome. For those the job's read does
   * `sending()`'s work in the same Redis call (one round trip fewer per write; RecordState.sendingDone).
   */
  readonly sendsHeldEvent?: readonly CanonicalEvent['type'][];
};
