import type { CanonicalEvent } from '../domain/events.js';
import type { RecordKey } from '../domain/record-key.js';
import type { Logger } from '../observability/logger.js';
import type { RecordState } from '../queue/record-state.js';
import type { TraceEntry } from '../queue/trace.js';

/** What a handler reports after doing the API work for one version of a record. */
export type HandlerOutcome =
  | { kind: 'done'; detail: string; status?: number; taxId?: string }
  /**
   * Something it needs is not there yet (a refund's invoice, an exemption's customer). `missing`
   * names what and where, when taxsync has never seen it (the record processor indexes it and
   * picks the dead-letter code when the wait runs out).
   */
  | { kind: 'wait'; reason: string; missing?: { record: RecordKey; what: 'original' | 'customer' | 'invoice' } };

export interface HandlerContext {
  record: RecordKey;
  state: RecordState;
  logger: Logger;
  trace(entry: Omit<TraceEntry, 'at'>): Promise<void>;
}

/**
 * Does the API work for the newest event of a record. Throws a TaxsyncError on failure (its code
 * and retry decision drive what happens next); never decides about retries itself.
 */
export type RecordHandler = (event: CanonicalEvent, ctx: HandlerContext) => Promise<HandlerOutcome>;
