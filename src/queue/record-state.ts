import type { RedisClient } from './connection.js';
import { parseCanonicalEvent, type CanonicalEvent } from '../domain/events.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Keys } from './keys.js';
import { execOrThrow, withScripts, type ScriptedChain } from './redis-scripts.js';
import { traceLine, type TraceEntry, type TraceSettings } from './trace.js';

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
  /** The applied copy's JSON as stored (undefined: none). */
  appliedJson: string | undefined;
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
  /** A hash of the last body the service accepted for this record (sentHash()), once known. */
  sentHash: string | undefined;
  /**
   * True when this read already made the newest version the applied copy and cleared the hash
   * (read with `sendingAtRead`, READ_STATE in redis-scripts.ts): the handler's `sending()` has
   * nothing left to do. The other fields are as they were before.
   */
  sendingDone?: boolean;
  /** When the newest event was received (epoch ms; 0 when unknown): the coalescing window runs from it. */
  receivedAt: number;
  /** When the event before it was received (epoch ms; 0 when none): closer than the window, the record is in a burst. */
  prevReceivedAt: number;
}

/** What the job's own read needs to do SENDING's work in the same round trip (READ_STATE). */
export interface SendingAtRead {
  /** The event types whose handler sends the held event whenever it sends (RecordHandler.sendsHeldEvent). */
  types: readonly string[];
  nowMs: number;
  /** The coalescing window (0: none) and the latest the job may wait: a record in a burst is not sent now. */
  windowMs: number;
  latestMs: number;
}

export interface RecordStore {
  read(key: RecordKey, sendingAtRead?: SendingAtRead): Promise<RecordState>;
  /**
   * The version read at `seq` is done with: accepted by the API, or dead-lettered (then it is not
   * retried by itself; a newer event or a replay brings the record back). Returns 0 when nothing
   * newer arrived meanwhile, else the newer seq to process next; 'fenced' when `also.fence` says
   * the job lost its lock meanwhile (nothing is marked and the record is sent again: takenOver).
   */
  markApplied(key: RecordKey, seq: number, event: CanonicalEvent | undefined, now: Date, also?: AppliedWith): Promise<number | 'fenced'>;
  /**
   * The record was taken over by another worker while this job worked (its lock ran out), so this
   * job's write may have landed after a newer one: the newest version becomes a new version to
   * send again (src/queue/redis-scripts.ts, TAKEN_OVER_LIB). Returns its seq (0: nothing held).
   */
  takenOver(key: RecordKey): Promise<number>;
  /**
   * Right before a write of the version read at `seq` goes out: clears the record's `sent_hash`
   * and makes the version the applied copy (`copy`: the copy to keep when it is not the event as
   * held, `eventJson` the held event's JSON as read; `clearOnly`: the hash only, for a deletion),
   * so what the engine may hold is known even when the job stops before the mark. A version at or
   * below the one applied changes nothing.
   */
  sending(key: RecordKey, seq: number, options: { copy?: string; eventJson?: string; clearOnly?: boolean }): Promise<void>;
  /** Sets or clears bookkeeping fields of the record's state. */
  setFields(key: RecordKey, fields: StateFields): Promise<void>;
  /**
   * Whether the record holds a version not yet applied: two small fields, no event read or
   * parsed (checked after every completed job, so it stays cheap).
   */
  hasUnapplied(key: RecordKey): Promise<boolean>;
  /** Records with events not yet applied (the recovery sweep re-queues those that lost their job). */
  dirty(cursor: string, count: number): Promise<[string, string[]]>;
  /**
   * Marks the record's newest version not applied (and the record dirty), so its job runs it
   * again: the VAT resolver's way back to an open submission whose job is gone. Returns the seq
   * reopened, 0 when the record holds nothing.
   */
  reopen(key: RecordKey): Promise<number>;
}

export type StateFields = Partial<Record<'tax_id' | 'waiting_since' | 'first_failed_at' | 'create_pending' | 'sent_hash', string | null>>;

/**
 * The writes a handler may add to the mark applied (an invoice's tax variance), run in the mark's
 * own Lua call (MARK_APPLIED_WITH). An ioredis MULTI is one too (tests pass one).
 */
export interface AppliedWrites {
  hset(key: string, field: string, value: string): unknown;
  hdel(key: string, ...fields: string[]): unknown;
  hincrby(key: string, field: string, increment: number): unknown;
}

/** The keys of MARK_APPLIED (state, dirty, trace, event, applied, the job's lock). */
const MARK_KEYS = 6;

/** Records AppliedWrites as MARK_APPLIED_WITH's keys and write tokens. */
function recordWrites(also: (writes: AppliedWrites) => void): { keys: string[]; tokens: (string | number)[] } {
  const keys: string[] = [];
  const tokens: (string | number)[] = [];
  const add = (command: string, key: string, args: (string | number)[]): void => {
    let index = keys.indexOf(key);
    if (index < 0) index = keys.push(key) - 1;
    // The mark's keys come first; Lua counts from 1.
    tokens.push(command, MARK_KEYS + index + 1, args.length, ...args);
  };
  also({
    hset: (key, field, value) => add('HSET', key, [field, value]),
    hdel: (key, ...fields) => add('HDEL', key, fields),
    hincrby: (key, field, increment) => add('HINCRBY', key, [field, increment]),
  });
  return { keys, tokens };
}

/** What markApplied writes in the same transaction. */
export interface AppliedWith {
  fields?: StateFields;
  /** Trace lines, oldest first. */
  trace?: { entries: readonly TraceEntry[]; settings: TraceSettings };
  /** The event's JSON as read (RecordState.eventJson), kept as the applied copy when it must be sent. */
  eventJson?: string;
  /**
   * The applied copy to keep when it is not the event as held (a cancellation laid over the
   * version before it, so the next cancellation or a replay has the whole document): written
   * instead of moving the held event.
   */
  kept?: string;
  /** More writes in the same step (a handler's `alsoOnApplied`), run once: with the first mark, whatever it answers. */
  also?: (writes: AppliedWrites) => void;
  /** The job's lock and token: nothing is marked unless the job still holds its lock. */
  fence?: { lockKey: string; token: string };
}

/** The fields to set (name, value pairs) and to clear (null), in the order given. */
function splitFields(fields: StateFields): { set: string[]; clear: string[] } {
  const set: string[] = [];
  const clear: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === null) clear.push(field);
    else if (value !== undefined) set.push(field, value);
  }
  return { set, clear };
}

/** A stored event (the held or the applied copy) as a canonical event; undefined when none or it no longer parses. */
export function parseStored(json: string | null | undefined): CanonicalEvent | undefined {
  if (!json) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const parsed = parseCanonicalEvent(value);
  return parsed.success ? parsed.data : undefined;
}

export function createRecordStore(connection: RedisClient, keys: Keys): RecordStore {
  const redis = withScripts(connection);
  async function read(key: RecordKey, sendingAtRead?: SendingAtRead): Promise<RecordState> {
    const recordKey = recordKeyString(key);
    const at = sendingAtRead && sendingAtRead.types.length > 0 ? [sendingAtRead.types.join(' '), sendingAtRead.nowMs, sendingAtRead.windowMs, sendingAtRead.latestMs] : [];
    const [seqField, appliedSeqField, taxId, waitingSince, firstFailedAt, createPending, held, appliedJson, sentHash, receivedAt, prevReceivedAt, sendingDone] = await redis.taxsyncReadState(
      keys.state(recordKey),
      keys.event(recordKey),
      keys.applied(recordKey),
      ...at,
    );
    const seq = Number(seqField ?? 0);
    const appliedSeq = Number(appliedSeqField ?? 0);
    // Once the newest version is applied, its event has moved to the applied key.
    const eventJson = held ?? (seq > 0 && seq <= appliedSeq ? appliedJson : null);
    // The applied event is parsed only when a handler asks for it (cancellations, refunds): most
    // jobs never look at it, and parsing an event is a large part of a job's own CPU time.
    let applied: { event: CanonicalEvent | undefined } | undefined;
    return {
      event: parseStored(eventJson),
      get appliedEvent() {
        applied ??= { event: parseStored(appliedJson) };
        return applied.event;
      },
      eventJson: eventJson ?? undefined,
      appliedJson: appliedJson ?? undefined,
      seq,
      appliedSeq,
      taxId: taxId ?? undefined,
      waitingSince: waitingSince ? Number(waitingSince) : undefined,
      firstFailedAt: firstFailedAt ?? undefined,
      createPending: createPending ?? undefined,
      sentHash: sentHash ?? undefined,
      receivedAt: Number(receivedAt ?? 0),
      prevReceivedAt: Number(prevReceivedAt ?? 0),
      ...(sendingDone === '1' ? { sendingDone: true } : {}),
    };
  }
  async function markApplied(key: RecordKey, seq: number, event: CanonicalEvent | undefined, now: Date, also: AppliedWith = {}): Promise<number | 'fenced'> {
    const recordKey = recordKeyString(key);
    const { set, clear } = splitFields(also.fields ?? {});
    const traceLines = also.trace && also.trace.settings.maxEntries > 0 ? also.trace.entries.map(traceLine) : [];
    const args = (applied: string): Parameters<ScriptedChain['taxsyncMarkApplied']> => [
      keys.state(recordKey),
      keys.dirty,
      keys.trace(recordKey),
      keys.event(recordKey),
      keys.applied(recordKey),
      also.fence?.lockKey ?? keys.state(recordKey),
      seq,
      event ? Date.parse(event.occurred_at) : 0,
      event?.id ?? '',
      recordKey,
      now.getTime(),
      applied,
      also.trace?.settings.maxEntries ?? 0,
      also.trace?.settings.maxAgeMs ?? 0,
      set.length / 2,
      clear.length,
      also.fence?.token ?? '',
      ...set,
      ...clear,
      ...traceLines,
    ];
    // The handler's writes go with the first call only: it always runs them (a MULTI runs every
    // command whatever the mark answers), and a counter among them must not count twice.
    const run = async (applied: string, withAlso: boolean): Promise<unknown> => {
      if (!also.also || !withAlso) return redis.taxsyncMarkApplied(...args(applied));
      // One round trip and one script: the mark, then the handler's writes.
      const writes = recordWrites(also.also);
      const mark = args(applied);
      return redis.taxsyncMarkAppliedWith(
        MARK_KEYS + writes.keys.length,
        ...mark.slice(0, MARK_KEYS),
        ...writes.keys,
        writes.tokens.length,
        ...writes.tokens,
        ...mark.slice(MARK_KEYS),
      );
    };
    // Usually the event applied is still the one held, and Redis copies it; when a newer one has
    // replaced it meanwhile (-seq), the event is sent.
    const first = await run(also.kept ?? '=', true);
    if (first === 'fenced') return 'fenced';
    const result = Number(first);
    if (result >= 0) return result;
    // The bytes read (also when they no longer parse), so the applied copy is exactly what was held.
    const second = await run(also.eventJson ?? (event ? JSON.stringify(event) : ''), false);
    return second === 'fenced' ? 'fenced' : Number(second);
  }
  async function sending(key: RecordKey, seq: number, options: { copy?: string; eventJson?: string; clearOnly?: boolean }): Promise<void> {
    const recordKey = recordKeyString(key);
    const send = (copy: string) => redis.taxsyncSending(keys.state(recordKey), keys.event(recordKey), keys.applied(recordKey), seq, copy);
    // Usually the held event is still this version and Redis copies it; a newer one arrived meanwhile: the event is sent.
    const result = await send(options.clearOnly ? '-' : (options.copy ?? ''));
    if (result < 0 && options.eventJson !== undefined) await send(options.eventJson);
  }
  return {
    read,
    markApplied,
    sending,
    async takenOver(key) {
      const recordKey = recordKeyString(key);
      return Number(await redis.taxsyncTakenOver(keys.state(recordKey), keys.dirty, keys.event(recordKey), keys.applied(recordKey), recordKey));
    },
    async setFields(key, fields) {
      const stateKey = keys.state(recordKeyString(key));
      const { set, clear } = splitFields(fields);
      // One command needs no MULTI (ioredis's MULTI costs more than the command on a hot path).
      if (clear.length === 0) {
        if (set.length > 0) await redis.hset(stateKey, ...set);
      } else if (set.length === 0) await redis.hdel(stateKey, ...clear);
      else await execOrThrow(redis.multi().hset(stateKey, ...set).hdel(stateKey, ...clear));
    },
    async hasUnapplied(key) {
      const [seq, appliedSeq] = await redis.hmget(keys.state(recordKeyString(key)), 'seq', 'applied_seq');
      return Number(seq ?? 0) > Number(appliedSeq ?? 0);
    },
    dirty: (cursor, count) => redis.sscan(keys.dirty, cursor, 'COUNT', count),
    async reopen(key) {
      const recordKey = recordKeyString(key);
      return Number(await redis.taxsyncReplayMark(keys.state(recordKey), keys.dirty, keys.event(recordKey), keys.applied(recordKey), '', recordKey, '', ''));
    },
  };
}
