import type { Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { RedisClient } from './connection.js';
import type { DeadLetterStore } from './dead-letter.js';
import { enqueueRecordIn, type EnqueueOptions } from './enqueue.js';
import type { Keys } from './keys.js';
import { execOrThrow, scriptedMulti, withScripts } from './redis-scripts.js';
import { appendTrace, type TraceEntry, type TraceSettings } from './trace.js';

/**
 * A dead-lettered record put back to work, as the queue layer does it: Redis, the Lua script and
 * BullMQ stay here, the dead-letter service decides (docs/operations.md, "Replaying entries").
 */
export interface ReplayDeps {
  /** The record's queue; its connection runs the transaction (the entry's removal is in it). */
  queue: Queue;
  keys: Keys;
  /** Where replayed entries are removed from; `taxsync resend` replaces none. */
  deadLetters?: Pick<DeadLetterStore, 'removeTo'>;
  trace: TraceSettings;
  retry?: EnqueueOptions['retry'];
}

async function transaction(queue: Queue) {
  return scriptedMulti(withScripts((await queue.backend.client) as unknown as RedisClient));
}

/**
 * ONE transaction: the record's version marked not applied, its job, the entry's removal, a trace
 * line. An interrupted replay did all of it or none; a second replay finds the entry gone.
 * `eventId` is the dead-lettered event, which must still be the one held (a newer one wins and the
 * state is left alone); none = the latest state, whichever it is (`--remap`). `editedEventJson`
 * (`dlq edit`) is written as the record's newest version, only while the held event is that id.
 * Answers whether the state was marked (false: a newer event, or no state).
 */
export async function replayRecord(
  deps: ReplayDeps,
  input: {
    record: RecordKey;
    /** The dead-letter entry this replaces, removed in the same step; none for `taxsync resend`. */
    entryId?: string;
    eventId?: string;
    editedEventJson?: string;
    trace: TraceEntry;
    /** More writes for the same step (an audit line). */
    also?: (multi: ChainableCommander) => void;
  },
): Promise<boolean> {
  const recordKey = recordKeyString(input.record);
  const { keys } = deps;
  const multi = await transaction(deps.queue);
  // A tax engine record is replayed as a new version: a job of it still running sends it after
  // its own mark (VAT submissions go through their ledger instead: docs/vat.md).
  const newVersion = input.record.kind === 'vat' ? '' : '1';
  multi.taxsyncReplayMark(keys.state(recordKey), keys.dirty, keys.event(recordKey), keys.applied(recordKey), input.eventId ?? '', recordKey, input.editedEventJson ?? '', newVersion);
  enqueueRecordIn(multi, deps.queue, input.record, { retry: deps.retry });
  if (input.entryId !== undefined) deps.deadLetters?.removeTo(multi, input.entryId);
  appendTrace(multi, keys, recordKey, input.trace, deps.trace);
  input.also?.(multi);
  const results = await execOrThrow(multi);
  return Number(results[0]?.[1]) > 0;
}

/** The entry removed (a newer event superseded it), with its trace line, in one transaction. */
export async function dropSupersededEntry(deps: ReplayDeps, input: { record: RecordKey; entryId: string; trace: TraceEntry }): Promise<void> {
  const multi = await transaction(deps.queue);
  deps.deadLetters?.removeTo(multi, input.entryId);
  appendTrace(multi, deps.keys, recordKeyString(input.record), input.trace, deps.trace);
  await execOrThrow(multi);
}
