import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';
import { parseCanonicalEvent, type CanonicalEvent } from '../domain/events.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Keys } from './keys.js';
import { scriptedMulti, withScripts } from './redis-scripts.js';
import { appendTrace, type TraceEntry, type TraceSettings } from './trace.js';

/** What the latest-state store holds for one record. */
export interface RecordState {
  /** The newest event received, or undefined when none is held (or it no longer parses). */
  event: CanonicalEvent | undefined;
  /** Raw JSON of the newest event, kept for dead-letter entries even when it no longer parses. */
  eventJson: string | undefined;
  seq: number;
  appliedSeq: number;
  /** The event last applied to the API (or dead-lettered), when it still parses. */
  appliedEvent: CanonicalEvent | undefined;
  /** The tax engine's id of this record, once known. */
  taxId: string | undefined;
  /** When the record first started waiting (for an original invoice or a customer). */
  waitingSince: number | undefined;
  /** When the current run of failures began. */
  firstFailedAt: string | undefined;
  /**
   * Set while an exemption create's answer may have been lost: the body it sent (JSON), or `1`
   * when an older version wrote the mark (see the exemption processor).
   */
  createPending: string | undefined;
}

export interface RecordStore {
  read(key: RecordKey): Promise<RecordState>;
  /**
   * The version read at `seq` is done with: accepted by the API, or dead-lettered (then it is not
   * retried by itself; a newer event or a replay brings the record back). Returns 0 when nothing
   * newer arrived meanwhile, else the newer seq to process next.
   */
  markApplied(key: RecordKey, seq: number, event: CanonicalEvent | undefined, now: Date, also?: AppliedWith): Promise<number>;
  /** Sets or clears bookkeeping fields of the record's state. */
  setFields(key: RecordKey, fields: StateFields): Promise<void>;
  /** Records with events not yet applied (the recovery sweep re-queues those that lost their job). */
  dirty(cursor: string, count: number): Promise<[string, string[]]>;
}

export type StateFields = Partial<Record<'tax_id' | 'waiting_since' | 'first_failed_at' | 'create_pending', string | null>>;

/** What markApplied writes in the same transaction. */
export interface AppliedWith {
  fields?: StateFields;
  trace?: { entry: TraceEntry; settings: TraceSettings };
}

/** Sets (string) or clears (null) bookkeeping fields of a record's state, on a MULTI. */
function queueFields(multi: ChainableCommander, stateKey: string, fields: StateFields): void {
  const set: string[] = [];
  const del: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === null) del.push(field);
    else if (value !== undefined) set.push(field, value);
  }
  if (set.length > 0) multi.hset(stateKey, ...set);
  if (del.length > 0) multi.hdel(stateKey, ...del);
}

function parseStored(json: string | null | undefined): CanonicalEvent | undefined {
  if (!json) return undefined;
  const parsed = parseCanonicalEvent(JSON.parse(json));
  return parsed.success ? parsed.data : undefined;
}

export function createRecordStore(connection: RedisClient, keys: Keys): RecordStore {
  const redis = withScripts(connection);
  async function read(key: RecordKey): Promise<RecordState> {
    const [eventJson, seq, appliedSeq, taxId, waitingSince, firstFailedAt, createPending, appliedJson] = await redis.hmget(
      keys.state(recordKeyString(key)),
      'event',
      'seq',
      'applied_seq',
      'tax_id',
      'waiting_since',
      'first_failed_at',
      'create_pending',
      'applied_event',
    );
    return {
      event: parseStored(eventJson),
      appliedEvent: parseStored(appliedJson),
      eventJson: eventJson ?? undefined,
      seq: Number(seq ?? 0),
      appliedSeq: Number(appliedSeq ?? 0),
      taxId: taxId ?? undefined,
      waitingSince: waitingSince ? Number(waitingSince) : undefined,
      firstFailedAt: firstFailedAt ?? undefined,
      createPending: createPending ?? undefined,
    };
  }
  async function markApplied(key: RecordKey, seq: number, event: CanonicalEvent | undefined, now: Date, also: AppliedWith = {}): Promise<number> {
    const recordKey = recordKeyString(key);
    // The bookkeeping fields, the trace line and the mark go in one round trip (a job's hot path).
    const multi = scriptedMulti(redis);
    if (also.fields) queueFields(multi, keys.state(recordKey), also.fields);
    if (also.trace) appendTrace(multi, keys, recordKey, also.trace.entry, also.trace.settings);
    multi.taxsyncMarkApplied(
      keys.state(recordKey),
      keys.dirty,
      seq,
      event ? Date.parse(event.occurred_at) : 0,
      event?.id ?? '',
      recordKey,
      now.getTime(),
      event ? JSON.stringify(event) : '',
    );
    const results = await multi.exec();
    if (results === null) throw new Error('Redis transaction was aborted');
    for (const [error] of results) if (error) throw error;
    return Number(results.at(-1)?.[1]);
  }
  return {
    read,
    markApplied,
    async setFields(key, fields) {
      const multi = redis.multi();
      queueFields(multi, keys.state(recordKeyString(key)), fields);
      await multi.exec();
    },
    dirty: (cursor, count) => redis.sscan(keys.dirty, cursor, 'COUNT', count),
  };
}
