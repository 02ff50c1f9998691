import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * taxsync's Lua scripts, defined on a connection once. Every script touches only keys under the
 * one prefix, so it is safe on Redis Cluster. They run inside MULTI together with BullMQ's own
 * job-adding script, which is what makes "state written" and "job queued" one atomic step.
 */

// Latest-state write. Drops an event older than the one held (and therefore older than the last
// one applied): ties go to the later arrival. Returns the new seq, 0 for the same event again, -1
// for a stale event. Appends to the record's trace in the same step.
const RECORD_EVENT = `
local held = redis.call('HMGET', KEYS[1], 'event_at', 'event_id')
local held_at = tonumber(held[1] or '-1')
local trace_max = tonumber(ARGV[7])
local function trace(entry)
  if trace_max > 0 then
    redis.call('LPUSH', KEYS[3], entry)
    redis.call('LTRIM', KEYS[3], 0, trace_max - 1)
    redis.call('PEXPIRE', KEYS[3], ARGV[8])
  end
end
if held[2] == ARGV[3] then
  redis.call('HINCRBY', KEYS[4], 'duplicate_events', 1)
  return 0
end
if tonumber(ARGV[2]) < held_at then
  redis.call('HINCRBY', KEYS[1], 'stale', 1)
  redis.call('HINCRBY', KEYS[4], 'stale_events', 1)
  trace(ARGV[6])
  return -1
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'event', ARGV[1], 'event_at', ARGV[2], 'event_id', ARGV[3], 'received_at', ARGV[5])
redis.call('SADD', KEYS[2], ARGV[4])
trace(ARGV[9])
return seq
`;

// After a successful API call for the state read at seq ARGV[1]. Keeps the applied event (a later
// partial cancellation is merged over it). Returns 0 when nothing newer arrived meanwhile (the
// record leaves the dirty set), else the newer seq to process next.
const MARK_APPLIED = `
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
redis.call('HSET', KEYS[1], 'applied_seq', ARGV[1], 'applied_at', ARGV[2], 'applied_event_id', ARGV[3], 'applied_time', ARGV[5], 'applied_event', ARGV[6])
if seq <= tonumber(ARGV[1]) then
  redis.call('SREM', KEYS[2], ARGV[4])
  return 0
end
return seq
`;

// An operator replay of a dead-lettered version (`taxsync dlq replay`). When the newest event held
// is still the dead-lettered one (same event id ARGV[1]), its version is marked not applied
// (applied_seq below seq) and the record goes back into the dirty set: the job queued in the same
// MULTI then sends it. Returns the seq replayed, or 0 when a newer event arrived meanwhile
// ("superseded": that newer state is sent by its own job, never the old one — invariant 2).
// ARGV[3], when not empty, is an operator-edited version of that same event (`dlq edit`; same id,
// record and occurred_at): it replaces the held event only while the id still matches, so the
// edit becomes the newest version and never overwrites a newer event. ARGV[1] empty (`--remap`)
// means "whatever is newest": that version is marked not applied, whichever event it is.
const REPLAY_MARK = `
local held = redis.call('HMGET', KEYS[1], 'event_id', 'seq', 'applied_seq')
if ARGV[1] ~= '' and held[1] ~= ARGV[1] then return 0 end
local seq = tonumber(held[2] or '0')
if seq <= 0 then return 0 end
if ARGV[3] ~= nil and ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'event', ARGV[3])
end
if tonumber(held[3] or '0') >= seq then
  redis.call('HSET', KEYS[1], 'applied_seq', seq - 1)
end
redis.call('SADD', KEYS[2], ARGV[2])
return seq
`;

export interface TaxsyncCommands {
  /** `eventId` '' = the newest version whatever it is; `editedEventJson` '' = keep the held event. */
  taxsyncReplayMark(stateKey: string, dirtyKey: string, eventId: string, recordKey: string, editedEventJson: string): Promise<number>;
  taxsyncRecordEvent(
    stateKey: string,
    dirtyKey: string,
    traceKey: string,
    countersKey: string,
    eventJson: string,
    occurredAtMs: number,
    eventId: string,
    recordKey: string,
    receivedAtMs: number,
    staleTraceEntry: string,
    traceMax: number,
    traceMaxAgeMs: number,
    receivedTraceEntry: string,
  ): Promise<number>;
  taxsyncMarkApplied(
    stateKey: string,
    dirtyKey: string,
    seq: number,
    occurredAtMs: number,
    eventId: string,
    recordKey: string,
    appliedAtMs: number,
    appliedEventJson: string,
  ): Promise<number>;
}

type Scripted = RedisClient & TaxsyncCommands;
type ScriptedChain = ChainableCommander & { [K in keyof TaxsyncCommands]: (...args: Parameters<TaxsyncCommands[K]>) => ScriptedChain };

const defined = new WeakSet<object>();

/** Defines the scripts on `client` (once) and returns it typed with them. */
export function withScripts(client: RedisClient): Scripted {
  if (!defined.has(client)) {
    client.defineCommand('taxsyncRecordEvent', { numberOfKeys: 4, lua: RECORD_EVENT });
    client.defineCommand('taxsyncMarkApplied', { numberOfKeys: 2, lua: MARK_APPLIED });
    client.defineCommand('taxsyncReplayMark', { numberOfKeys: 2, lua: REPLAY_MARK });
    defined.add(client);
  }
  return client as Scripted;
}

/** A MULTI on a scripted client, typed with the scripts. */
export function scriptedMulti(client: Scripted): ScriptedChain {
  return client.multi() as ScriptedChain;
}
