import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * taxsync's Lua scripts, defined on a connection once. Every script touches only keys under the
 * one prefix, so it is safe on Redis Cluster. They run inside MULTI together with BullMQ's own
 * job-adding script, which is what makes "state written" and "job queued" one atomic step.
 */

// The newest event of a record lives in a string key of its own (KEYS[5]) until it is applied,
// then it is renamed to the record's applied key: the state hash keeps only small fields, which
// Redis stores compactly (a hash with one long value costs about a third more), and an applied
// record keeps one copy of its event, not two. Hashes written before this layout kept the events
// in the 'event' and 'applied_event' fields; they are still read, and moved out when next written.

// The 'received' line of `taxsync trace` is not written when an event arrives: the state hash
// keeps a flag, `rcv`, and the line is built from the held event and `received_at` and pushed by
// the next write to the record's trace (every script that pushes a line flushes it first, so the
// order is what it would have been), or when the event is applied or replaced. A pending record
// thus carries no trace list (about 390 bytes of Redis memory), and `readTrace` shows the pending
// line as the newest. The line is byte for byte what `traceLine` in src/queue/trace.ts writes.
const TRACE_LIB = `
local function iso(ms)
  local s = math.floor(ms / 1000)
  local milli = ms - s * 1000
  local days = math.floor(s / 86400)
  local rem = s - days * 86400
  -- civil_from_days (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms")
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d, math.floor(rem / 3600), math.floor(rem % 3600 / 60), rem % 60, milli)
end
-- JSON.stringify leaves '/' alone; cjson escapes it (a '\\/' only ever comes from that escape).
local function enc(v) return (string.gsub(cjson.encode(v), '\\\\/', '/')) end
-- A line for the event \`raw\` (its JSON) at \`at_ms\`, in traceLine's key order; nil when unreadable.
local function event_line(raw, at_ms, step, detail)
  local ok, ev = pcall(cjson.decode, raw)
  if not ok or type(ev) ~= 'table' then return nil end
  local out = { '{"at":', enc(iso(at_ms)) }
  for _, f in ipairs({ { 'event_id', ev.id }, { 'occurred_at', ev.occurred_at }, { 'connector', ev.connector }, { 'step', step }, { 'detail', detail or ev.type } }) do
    if type(f[2]) == 'string' then out[#out + 1] = ',"' .. f[1] .. '":' .. enc(f[2]) end
  end
  out[#out + 1] = '}'
  return table.concat(out)
end
local function push_lines(trace_key, max, age, lines)
  if max <= 0 or #lines == 0 then return end
  redis.call('LPUSH', trace_key, unpack(lines))
  redis.call('LTRIM', trace_key, 0, max - 1)
  redis.call('PEXPIRE', trace_key, age)
end
-- The pending 'received' line of the newest event, or nil. The event is in the event key, or in
-- the applied key once applied by a write that carried no trace settings.
local function pending_line(state_key, event_key, applied_key)
  local f = redis.call('HMGET', state_key, 'rcv', 'received_at')
  if not f[1] then return nil end
  local raw = redis.call('GET', event_key)
  if not raw and applied_key then raw = redis.call('GET', applied_key) end
  return raw and event_line(raw, tonumber(f[2] or '0'), 'received') or false
end
-- Pushes the pending line (if any) and then \`lines\` (oldest first), in one LPUSH. With tracing
-- off here (max 0) the flag stays for a writer that has the settings.
local function flush_received(state_key, event_key, applied_key, trace_key, max, age, lines)
  if max <= 0 then return end
  local line = pending_line(state_key, event_key, applied_key)
  if line ~= nil then redis.call('HDEL', state_key, 'rcv') end
  if line then table.insert(lines, 1, line) end
  push_lines(trace_key, max, age, lines)
end
`;

// Latest-state write. Drops an event that does not come after the one held (and therefore after
// the last one applied), in the object's own order (docs/events.md, "Ordering"):
// 1. a final state held (a void) is replaced only by another final state, whatever the times;
// 2. when both carry a version, the higher version wins (equal: the next rules);
// 3. otherwise the later occurred_at wins; within the same instant the higher precedence wins;
//    a full tie goes to the later arrival.
// Returns the new seq, 0 for the same event again, -1 for a stale event. Appends to the record's
// trace in the same step (a stale line now; the event's 'received' line when it is applied or
// replaced, see TRACE_LIB). ARGV[8] is the incoming event's order, `<precedence>|<final>|<version>`
// (eventOrder in src/domain/events.ts); absent means `0|0|`.
// KEYS: state, dirty, trace, counters, event, applied.
// ARGV: 1 event JSON, 2 occurred_at ms, 3 event id, 4 record key, 5 received at ms, 6 trace max,
// 7 trace max age ms, 8 order.
const RECORD_EVENT = TRACE_LIB + `
local held = redis.call('HMGET', KEYS[1], 'event_at', 'event_id', 'event_prec', 'event_final', 'event_ver', 'received_at')
local held_at = tonumber(held[1] or '-1')
local trace_max = tonumber(ARGV[6])
if held[2] == ARGV[3] then
  redis.call('HINCRBY', KEYS[4], 'duplicate_events', 1)
  return 0
end
local prec, final, ver = string.match(ARGV[8] or '', '^(%d*)|(%d?)|(%d*)$')
prec = tonumber(prec) or 0
final = final == '1'
ver = tonumber(ver)
local at = tonumber(ARGV[2])
local stale = false
if held[1] then
  local held_ver = tonumber(held[5] or '')
  if held[4] == '1' and not final then
    stale = true
  elseif ver and held_ver and ver ~= held_ver then
    stale = ver < held_ver
  elseif at ~= held_at then
    stale = at < held_at
  else
    stale = prec < tonumber(held[3] or '0')
  end
end
-- The held event's 'received' line goes before this event's stale line, or before it is replaced.
if stale then
  redis.call('HINCRBY', KEYS[1], 'stale', 1)
  redis.call('HINCRBY', KEYS[4], 'stale_events', 1)
  local line = event_line(ARGV[1], tonumber(ARGV[5]), 'stale', 'older than the newest event held for this record; dropped')
  flush_received(KEYS[1], KEYS[5], KEYS[6], KEYS[3], trace_max, ARGV[7], { line })
  return -1
end
flush_received(KEYS[1], KEYS[5], KEYS[6], KEYS[3], trace_max, ARGV[7], {})
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'event_at', ARGV[2], 'event_id', ARGV[3], 'received_at', ARGV[5])
-- The coalescing window tells a burst from a lone update by the time between the two.
if held[6] then redis.call('HSET', KEYS[1], 'prev_received_at', held[6]) end
-- Order fields only when they differ from their defaults (absent reads as 0, not final, no
-- version): every pending record carries this hash, so its size is Redis memory per record.
if prec ~= 0 then redis.call('HSET', KEYS[1], 'event_prec', prec) else redis.call('HDEL', KEYS[1], 'event_prec') end
if final then redis.call('HSET', KEYS[1], 'event_final', '1') else redis.call('HDEL', KEYS[1], 'event_final') end
if ver then redis.call('HSET', KEYS[1], 'event_ver', ver) else redis.call('HDEL', KEYS[1], 'event_ver') end
redis.call('SET', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[1], 'event')
redis.call('SADD', KEYS[2], ARGV[4])
if trace_max > 0 then redis.call('HSET', KEYS[1], 'rcv', '1') end
return seq
`;

// A job that lost its record to another worker (its lock ran out while it worked: a process frozen,
// or cut off from Redis while it still reached the API) may have had its write land after the
// other worker's, newer one. The newest version, whichever it is, is made a new version (seq + 1,
// copied back from the applied key when it was applied), so whoever holds the record now sends it
// once more, after that write: its mark returns the new seq and it goes again (or the record is
// dirty for the next job). `resend_from` keeps a mark of a version read before this from writing a
// sent_hash (the body it names may not be the engine's any more). Returns the new seq, 0 when the
// record holds nothing. KEYS: state, dirty, event, applied; ARGV: record key.
const TAKEN_OVER_LIB = `
local function send_again(state_key, dirty_key, event_key, applied_key, record_key)
  local f = redis.call('HMGET', state_key, 'seq', 'event')
  if tonumber(f[1] or '0') <= 0 then return 0 end
  if redis.call('EXISTS', event_key) == 0 then
    local applied = redis.call('GET', applied_key) or f[2]
    if applied then redis.call('SET', event_key, applied) end
  end
  local seq = redis.call('HINCRBY', state_key, 'seq', 1)
  redis.call('HSET', state_key, 'resend_from', seq)
  redis.call('HDEL', state_key, 'sent_hash')
  redis.call('SADD', dirty_key, record_key)
  return seq
end
`;

const TAKEN_OVER = TAKEN_OVER_LIB + `
return send_again(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1])
`;

// After a successful API call (or a dead letter) for the state read at seq ARGV[1]: one script, so
// a job's hot path costs one round trip. Keeps the applied event (a later partial cancellation is
// merged over it): ARGV[6] '=' means "the event held", moved inside Redis to the applied key while
// it is still version ARGV[1] (the usual case, and no event sent over the wire); when a newer
// event has replaced it, nothing is written and -seq is returned, and the caller sends the event.
// Also sets / clears bookkeeping fields and appends trace lines (oldest first). Returns 0 when
// nothing newer arrived meanwhile (the record leaves the dirty set), else the newer seq.
// ARGV: 1 seq, 2 occurred_at ms, 3 event id, 4 record key, 5 applied at ms, 6 applied event,
// 7 trace max, 8 trace max age ms, 9 fields to set (pairs, count), 10 fields to clear (count),
// 11 the job's lock token ('' = not fenced), then the set pairs, the cleared names and the trace
// lines. A version no newer than the one already applied writes only its trace lines and returns
// 0. A job whose lock (KEYS[6]) is no longer its own marks nothing and returns 'fenced'.
// KEYS: state, dirty, trace, event, applied, the job's lock (the state key when not fenced).
// The mark as a function of its keys and arguments (the parameters shadow the script's own), so
// MARK_APPLIED_WITH can run it with writes of the handler's after it.
const MARK_FUNCTION = TRACE_LIB + TAKEN_OVER_LIB + `
local function mark(KEYS, ARGV)
-- Fenced: this job lost its lock while it worked (ARGV[11], when set, is its token; KEYS[6] the
-- lock), so another worker holds the record and may have sent a newer version before this job's
-- write landed. Nothing is marked; the newest version is sent again (see TAKEN_OVER_LIB).
if ARGV[11] ~= '' and redis.call('GET', KEYS[6]) ~= ARGV[11] then
  local n_set = tonumber(ARGV[9])
  local n_del = tonumber(ARGV[10])
  flush_received(KEYS[1], KEYS[4], KEYS[5], KEYS[3], tonumber(ARGV[7]), ARGV[8], { unpack(ARGV, 12 + 2 * n_set + n_del, #ARGV) })
  send_again(KEYS[1], KEYS[2], KEYS[4], KEYS[5], ARGV[4])
  return 'fenced'
end
local held = redis.call('HMGET', KEYS[1], 'seq', 'applied_seq', 'resend_from')
local seq = tonumber(held[1] or '0')
-- A version at or below the one already applied (a stalled job finishing after the job that took
-- over from it applied something newer): marking it would take applied_seq back and overwrite the
-- newer applied event, the only copy of it. Only its trace lines are written.
local superseded = tonumber(held[2] or '0') >= tonumber(ARGV[1])
local n_set = tonumber(ARGV[9])
local n_del = tonumber(ARGV[10])
-- Nothing is written when the caller has to send the event after all (see above).
if not superseded and ARGV[6] == '=' and seq ~= tonumber(ARGV[1]) then return -seq end
-- A pending 'received' line goes before this job's lines (it arrived before they were written),
-- in the same LPUSH, while the held event is still in the event key.
flush_received(KEYS[1], KEYS[4], KEYS[5], KEYS[3], tonumber(ARGV[7]), ARGV[8], { unpack(ARGV, 12 + 2 * n_set + n_del, #ARGV) })
if not superseded then
  local applied = ARGV[6]
  if applied == '=' then
    if redis.call('EXISTS', KEYS[4]) == 1 then
      redis.call('RENAME', KEYS[4], KEYS[5])
    else
      local legacy = redis.call('HGET', KEYS[1], 'event')
      if legacy then redis.call('SET', KEYS[5], legacy) end
    end
  elseif applied == '' then
    redis.call('DEL', KEYS[5])
  else
    -- Also a copy the caller keeps instead of the held event (a cancellation laid over the
    -- version before it): the event key then keeps the event as received, the newest version.
    redis.call('SET', KEYS[5], applied)
  end
  redis.call('HDEL', KEYS[1], 'event', 'applied_event')
  redis.call('HSET', KEYS[1], 'applied_seq', ARGV[1], 'applied_at', ARGV[2], 'applied_event_id', ARGV[3], 'applied_time', ARGV[5])
  if n_set > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 12, 11 + 2 * n_set)) end
  if n_del > 0 then redis.call('HDEL', KEYS[1], unpack(ARGV, 12 + 2 * n_set, 11 + 2 * n_set + n_del)) end
  -- A version read before the record was taken over: the body it names may not be the engine's.
  if held[3] then
    if tonumber(ARGV[1]) < tonumber(held[3]) then redis.call('HDEL', KEYS[1], 'sent_hash') else redis.call('HDEL', KEYS[1], 'resend_from') end
  end
end
if superseded then return 0 end
if seq <= tonumber(ARGV[1]) then
  redis.call('SREM', KEYS[2], ARGV[4])
  return 0
end
return seq
end
`;

const MARK_APPLIED = MARK_FUNCTION + `
return mark(KEYS, ARGV)
`;

// The mark and, in the same script, a handler's writes (RecordStore's AppliedWrites: an invoice's
// tax variance), run after it whatever it answers, as a MULTI of the two did — one EVALSHA instead
// of ioredis's MULTI, which cost the worker more than the writes themselves. KEYS: the mark's six,
// then the writes' keys. ARGV: 1 the number T of write tokens, 2..1+T the writes (each: command,
// its key's index in KEYS, the number of arguments, the arguments), then the mark's arguments.
const MARK_APPLIED_WITH = MARK_FUNCTION + `
local t = tonumber(ARGV[1])
-- Every write is checked before anything is written: a script stopped halfway keeps what it wrote,
-- and a mark kept without its writes would be retried as done.
local i = 2
while i <= 1 + t do
  local command = ARGV[i]
  if command ~= 'HSET' and command ~= 'HDEL' and command ~= 'HINCRBY' then return redis.error_reply('taxsync: not a write the mark runs: ' .. command) end
  i = i + 3 + tonumber(ARGV[i + 2])
end
local result = mark({ KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6] }, { unpack(ARGV, 2 + t, #ARGV) })
i = 2
while i <= 1 + t do
  local n = tonumber(ARGV[i + 2])
  redis.call(ARGV[i], KEYS[tonumber(ARGV[i + 1])], unpack(ARGV, i + 3, i + 2 + n))
  i = i + 3 + n
end
return result
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
// KEYS: state, dirty, event, applied. A version already applied (moved to the applied key) is
// copied back as the newest event, so its job has it to send. The record's sent_hash is cleared:
// a replayed version is sent even when its body is the one last accepted. ARGV[4] '1' (the tax
// engine's records) makes the version a new one instead (seq + 1, see TAKEN_OVER_LIB): a job of
// the record still running, which read it before (and may have decided to skip it as unchanged),
// finds a newer version when it marks its own and sends it, instead of taking the replay for done.
const REPLAY_MARK = TAKEN_OVER_LIB + `
local held = redis.call('HMGET', KEYS[1], 'event_id', 'seq', 'applied_seq')
if ARGV[1] ~= '' and held[1] ~= ARGV[1] then return 0 end
local seq = tonumber(held[2] or '0')
if seq <= 0 then return 0 end
if ARGV[3] ~= nil and ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], ARGV[3])
  redis.call('HDEL', KEYS[1], 'event')
elseif redis.call('EXISTS', KEYS[3]) == 0 then
  local applied = redis.call('GET', KEYS[4]) or redis.call('HGET', KEYS[1], 'event')
  if applied then redis.call('SET', KEYS[3], applied) end
end
if ARGV[4] == '1' then return send_again(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2]) end
if tonumber(held[3] or '0') >= seq then
  redis.call('HSET', KEYS[1], 'applied_seq', seq - 1)
end
-- A replay sends even a body equal to the one last accepted (skip unchanged is for new events).
redis.call('HDEL', KEYS[1], 'sent_hash')
redis.call('SADD', KEYS[2], ARGV[2])
return seq
`;

// Right before a write of version ARGV[1] goes out: the record's sent_hash is cleared (skip
// unchanged must not trust it until the write is answered and marked) and the version becomes the
// applied copy, the version the engine may hold from now on — so a job stopped between the answer
// and the mark leaves, for the next version, the data the engine took (a cancellation is laid over
// it, a deletion's refund found from it). ARGV[2] is the copy to keep when it is not the held event
// (a cancellation laid over the version before it), '' for the held event (copied inside Redis),
// '-' to clear the hash only (a deletion keeps the copy of what it deletes). A version at or below
// the one applied (a stalled job still running after the job that took over marked a newer one)
// changes nothing. Returns 1, or -1 when the held event is newer than ARGV[1] and ARGV[2] is '':
// the caller then sends the version's event as ARGV[2].
// KEYS: state, event, applied.
const SENDING = `
local f = redis.call('HMGET', KEYS[1], 'seq', 'applied_seq', 'event')
if tonumber(f[2] or '0') >= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '' and tonumber(f[1] or '0') ~= tonumber(ARGV[1]) then return -1 end
redis.call('HDEL', KEYS[1], 'sent_hash')
if ARGV[2] == '-' then return 1 end
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[3], ARGV[2])
  return 1
end
local raw = redis.call('GET', KEYS[2]) or f[3]
if raw then redis.call('SET', KEYS[3], raw) end
return 1
`;

// Appends trace lines (ARGV[3..], oldest first) after the pending 'received' line.
// KEYS: state, event, applied, trace. ARGV: 1 trace max, 2 trace max age ms, then the lines.
const TRACE = TRACE_LIB + `
flush_received(KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]), ARGV[2], { unpack(ARGV, 3, #ARGV) })
return 0
`;

// A record's trace, newest first, the pending 'received' line included. KEYS: state, event,
// applied, trace.
const READ_TRACE = TRACE_LIB + `
local lines = redis.call('LRANGE', KEYS[4], 0, -1)
local line = pending_line(KEYS[1], KEYS[2], KEYS[3])
if line then table.insert(lines, 1, line) end
return lines
`;

// One consistent read of a record (KEYS: state, event, applied): the hash's small fields, then
// the newest event and the applied one (each falling back to the fields older hashes kept), and
// '1' when the read also did SENDING's work for the newest version, else '0'.
//
// The job's own read may do it (ARGV: 1 the event types whose handler sends the held event
// whenever it sends, never waits and never keeps another copy, space-separated; 2 now ms; 3 the
// coalescing window ms; 4 the latest the job may wait, ms): when the newest version is not applied
// yet, the record is not in a burst (the record processor's coalesceUntil, same numbers) and the
// held event is of one of those types, its sent_hash is cleared and it becomes the applied copy
// here, one round trip before the write instead of a SENDING of its own. A version of those types
// that is then skipped as unchanged, ignored or dead-lettered is marked applied anyway (the mark
// writes the hash back); a job stopped in between leaves the hash cleared, so the body is sent
// once more: never skipped wrongly. The values returned are those read before.
const READ_STATE = `
local f = redis.call('HMGET', KEYS[1], 'seq', 'applied_seq', 'tax_id', 'waiting_since', 'first_failed_at', 'create_pending', 'event', 'applied_event', 'sent_hash', 'received_at', 'prev_received_at')
local event = redis.call('GET', KEYS[2]) or f[7]
local applied = redis.call('GET', KEYS[3]) or f[8]
local sending = '0'
if ARGV[1] and ARGV[1] ~= '' and event and tonumber(f[1] or '0') > tonumber(f[2] or '0') then
  local now, window, latest = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local received, prev = tonumber(f[10] or '0'), tonumber(f[11] or '0')
  local burst = window > 0 and received > 0 and prev > 0 and received - prev < window and received + window > now and latest > now
  if not burst then
    local ok, decoded = pcall(cjson.decode, event)
    if ok and type(decoded) == 'table' and type(decoded['type']) == 'string' and string.find(' ' .. ARGV[1] .. ' ', ' ' .. decoded['type'] .. ' ', 1, true) then
      redis.call('HDEL', KEYS[1], 'sent_hash')
      redis.call('SET', KEYS[3], event)
      sending = '1'
    end
  end
end
return { f[1], f[2], f[3], f[4], f[5], f[6], event, applied, f[9], f[10], f[11], sending }
`;

export interface TaxsyncCommands {
  /** [seq, applied_seq, tax_id, waiting_since, first_failed_at, create_pending, event, applied event, sent_hash, received_at, prev_received_at, sending done '1'|'0']; see READ_STATE for the optional arguments. */
  taxsyncReadState(stateKey: string, eventKey: string, appliedKey: string, ...sendingAtRead: (string | number)[]): Promise<(string | null)[]>;
  /** `eventId` '' = the newest version whatever it is; `editedEventJson` '' = keep the held event; `newVersion` '1' = replayed as a new version. */
  taxsyncReplayMark(stateKey: string, dirtyKey: string, eventKey: string, appliedKey: string, eventId: string, recordKey: string, editedEventJson: string, newVersion: string): Promise<number>;
  taxsyncRecordEvent(
    stateKey: string,
    dirtyKey: string,
    traceKey: string,
    countersKey: string,
    eventKey: string,
    appliedKey: string,
    eventJson: string,
    occurredAtMs: number,
    eventId: string,
    recordKey: string,
    receivedAtMs: number,
    traceMax: number,
    traceMaxAgeMs: number,
    /** eventOrder(event): `<precedence>|<final>|<version>`. */
    order?: string,
  ): Promise<number>;
  /** Lines oldest first, after the record's pending 'received' line. */
  taxsyncTrace(stateKey: string, eventKey: string, appliedKey: string, traceKey: string, traceMax: number, traceMaxAgeMs: number, ...lines: string[]): Promise<number>;
  /** Newest first, with the pending 'received' line. */
  taxsyncReadTrace(stateKey: string, eventKey: string, appliedKey: string, traceKey: string): Promise<string[]>;
  /** See SENDING: `copy` '' = the event held, '-' = clear the hash only, else the copy to keep. */
  taxsyncSending(stateKey: string, eventKey: string, appliedKey: string, seq: number, copy: string): Promise<number>;
  /** See MARK_APPLIED_WITH: the number of keys first (the mark's six and the writes'). */
  taxsyncMarkAppliedWith(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number | 'fenced'>;
  /** See MARK_APPLIED for the arguments after the keys: a number, or 'fenced'. */
  taxsyncMarkApplied(stateKey: string, dirtyKey: string, traceKey: string, eventKey: string, appliedKey: string, lockKey: string, ...args: (string | number)[]): Promise<number | 'fenced'>;
  /** See TAKEN_OVER_LIB. */
  taxsyncTakenOver(stateKey: string, dirtyKey: string, eventKey: string, appliedKey: string, recordKey: string): Promise<number>;
}

type Scripted = RedisClient & TaxsyncCommands;
export type ScriptedChain = ChainableCommander & { [K in keyof TaxsyncCommands]: (...args: Parameters<TaxsyncCommands[K]>) => ScriptedChain };

const defined = new WeakSet<object>();

/** Defines the scripts on `client` (once) and returns it typed with them. */
export function withScripts(client: RedisClient): Scripted {
  if (!defined.has(client)) {
    client.defineCommand('taxsyncRecordEvent', { numberOfKeys: 6, lua: RECORD_EVENT });
    client.defineCommand('taxsyncTrace', { numberOfKeys: 4, lua: TRACE });
    client.defineCommand('taxsyncReadTrace', { numberOfKeys: 4, lua: READ_TRACE });
    client.defineCommand('taxsyncMarkApplied', { numberOfKeys: 6, lua: MARK_APPLIED });
    client.defineCommand('taxsyncMarkAppliedWith', { lua: MARK_APPLIED_WITH });
    client.defineCommand('taxsyncTakenOver', { numberOfKeys: 4, lua: TAKEN_OVER });
    client.defineCommand('taxsyncReplayMark', { numberOfKeys: 4, lua: REPLAY_MARK });
    client.defineCommand('taxsyncReadState', { numberOfKeys: 3, lua: READ_STATE });
    client.defineCommand('taxsyncSending', { numberOfKeys: 3, lua: SENDING });
    defined.add(client);
  }
  return client as Scripted;
}

const definedOne = new WeakMap<object, Set<string>>();

/**
 * A script of a module of its own (the customers' writer lock, a lease, a token store), defined on
 * `client` once and then run by its SHA (EVALSHA) like taxsync's other scripts, instead of sending
 * its text with every call. `name` must be unique across taxsync. Call it where the module is
 * built, before the client sends anything: on a client with auto-pipelining, a command defined
 * while commands are in flight broke the pipeline's answers (seen in tests).
 */
export function scriptOn(client: RedisClient, name: string, numberOfKeys: number, lua: string): (...keysAndArgs: (string | number)[]) => Promise<unknown> {
  let names = definedOne.get(client);
  if (names === undefined) definedOne.set(client, (names = new Set()));
  if (!names.has(name)) {
    client.defineCommand(name, { numberOfKeys, lua });
    names.add(name);
  }
  const command = (client as unknown as Record<string, (...args: (string | number)[]) => Promise<unknown>>)[name]!;
  return (...keysAndArgs) => command.apply(client, keysAndArgs);
}

/** A MULTI on a scripted client, typed with the scripts. */
export function scriptedMulti(client: Scripted): ScriptedChain {
  return client.multi() as ScriptedChain;
}

/** Runs a MULTI; an aborted transaction or any command's error rejects. */
export async function execOrThrow(multi: { exec(): Promise<[Error | null, unknown][] | null> }): Promise<[Error | null, unknown][]> {
  const results = await multi.exec();
  if (results === null) throw new Error('Redis transaction was aborted');
  for (const [error] of results) if (error) throw error;
  return results;
}
