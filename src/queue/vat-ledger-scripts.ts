/**
 * The VAT ledger's Lua scripts (src/queue/vat-ledger.ts has the states). Each is one atomic step,
 * so two workers (or a stalled worker and its successor) can never both hold an entry, and every
 * state change writes its history line and its place in the open index in the same step. Keys are
 * all under the installation's prefix (one hash slot on a cluster).
 *
 * Leases are decided on Redis's own clock (TIME), never a caller's: a worker or an operator machine
 * whose clock is off would take over or decide a live attempt, or claim a lease already over.
 * Calling TIME before writing is safe with script effects replication (the default since Redis 5,
 * the only mode since Redis 7): replicas and the AOF get the writes, not the script. The open
 * index is only a hint of when to look again (BEGIN decides), kept on the callers' clock like the
 * resolver that reads it.
 */

// Redis's clock in ms, moved by a shift (ARGV) that only tests set: they move time without waiting.
const REDIS_NOW = (shiftArg: string) => `
local redis_time = redis.call('TIME')
local now = tonumber(redis_time[1]) * 1000 + math.floor(tonumber(redis_time[2]) / 1000) + tonumber(${shiftArg})
`;

// Claims an entry for one attempt.
// KEYS: 1 entry, 2 index, 3 the record's own set, 4 history, 5 open index.
// ARGV: 1 the caller's now ms (the open index), 2 lease ms, 3 record, 4 body hash, 5 period, 6 net,
// 7 vat, 8 currency, 9 iso now, 10 body, 11 attempt token, 12 entity jurisdiction, 13 invoice number,
// 14 supplement of ('' none), 15 mode ('submit' | 'resolve'), 16 history max, 17 shift of Redis's clock ms.
// Returns {'go', ambiguous, attempts, resends, resend, body} or {state} or {'collision', owner}.
export const BEGIN = `${REDIS_NOW('ARGV[17]')}
local e = redis.call('HMGET', KEYS[1], 'state', 'lease_until', 'ambiguous', 'attempts', 'record', 'body_hash', 'resends')
local state = e[1]
if state and e[5] and e[5] ~= ARGV[3] then return {'collision', e[5]} end
if state == 'confirmed' or state == 'unresolved' then return {state} end
if state == 'in_flight' and tonumber(e[2] or '0') > now then return {'busy'} end
local ambiguous = e[3] == '1'
local resend = false
if state == 'in_flight' or state == 'unknown' then
  -- The last attempt may have reached the service: the same bytes go again, whatever the caller has.
  ambiguous = true
  resend = true
elseif state == 'rejected' then
  -- Refused and nothing of it accepted: a changed body is a new try, the same body is refused again.
  if ARGV[15] == 'resolve' or e[6] == ARGV[4] then return {'rejected'} end
elseif state == 'pending' and ambiguous then
  resend = true
end
if ARGV[15] == 'resolve' and not resend then return {state or 'none'} end
local attempts = tonumber(e[4] or '0') + 1
local resends = tonumber(e[7] or '0') + (resend and 1 or 0)
local lease_until = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'state', 'in_flight', 'lease_until', lease_until, 'ambiguous', ambiguous and '1' or '0',
  'attempts', attempts, 'resends', resends, 'token', ARGV[11], 'record', ARGV[3], 'entity_jurisdiction', ARGV[12],
  'invoice_number', ARGV[13], 'updated_at', ARGV[9])
if not resend then
  redis.call('HSET', KEYS[1], 'body', ARGV[10], 'body_hash', ARGV[4], 'reporting_period', ARGV[5], 'net', ARGV[6],
    'vat', ARGV[7], 'currency', ARGV[8])
  if ARGV[14] ~= '' then redis.call('HSET', KEYS[1], 'supplement_of', ARGV[14]) else redis.call('HDEL', KEYS[1], 'supplement_of') end
end
redis.call('SADD', KEYS[2], KEYS[1])
redis.call('SADD', KEYS[3], KEYS[1])
redis.call('ZADD', KEYS[5], tonumber(ARGV[1]) + tonumber(ARGV[2]), KEYS[1])
local hash = resend and redis.call('HGET', KEYS[1], 'body_hash') or ARGV[4]
redis.call('RPUSH', KEYS[4], cjson.encode({at = ARGV[9], attempt = attempts, outcome = resend and 'resent' or 'sent', body_hash = hash}))
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[16]), -1)
local body = resend and redis.call('HGET', KEYS[1], 'body') or ARGV[10]
return {'go', ambiguous and '1' or '0', tostring(attempts), tostring(resends), resend and '1' or '0', body}
`;

// Writes an attempt's answer while the attempt still holds the entry (its token); otherwise the
// write is refused, counted and noted in the history.
// KEYS: 1 entry, 2 history, 3 open index, 4 counters.
// ARGV: 1 token, 2 outcome, 3 iso now, 4 next look ms (an unknown's place in the open index),
// 5 note, 6 transaction id, 7 warnings '1'/'0', 8 history max, 9 error code ('' none),
// 10 '1' when a resend is released unsent (a claim that could not be made durable): not counted,
// 11 a confirmed submission's attention ('' none: the service will report it as it is).
export const SETTLE = `
local e = redis.call('HMGET', KEYS[1], 'state', 'token', 'attempts', 'body_hash', 'ambiguous')
local function history(outcome)
  local line = {at = ARGV[3], attempt = tonumber(e[3] or '0'), outcome = outcome, body_hash = e[4] or ''}
  if ARGV[5] ~= '' then line.note = ARGV[5] end
  redis.call('RPUSH', KEYS[2], cjson.encode(line))
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[8]), -1)
end
if e[1] ~= 'in_flight' or e[2] ~= ARGV[1] then
  redis.call('HINCRBY', KEYS[4], 'vat_fenced_writes', 1)
  history('fenced:' .. ARGV[2])
  return 0
end
local outcome = ARGV[2]
if outcome == 'released' then outcome = e[5] == '1' and 'unknown' or 'pending' end
local fields = {'updated_at', ARGV[3]}
if ARGV[5] ~= '' then table.insert(fields, 'note'); table.insert(fields, ARGV[5]) end
if ARGV[9] ~= '' then table.insert(fields, 'code'); table.insert(fields, ARGV[9]) else redis.call('HDEL', KEYS[1], 'code') end
if outcome == 'confirmed' then
  table.insert(fields, 'state'); table.insert(fields, 'confirmed')
  table.insert(fields, 'warnings'); table.insert(fields, ARGV[7])
  if ARGV[6] ~= '' then table.insert(fields, 'transaction_id'); table.insert(fields, ARGV[6]) end
  if ARGV[11] ~= '' then table.insert(fields, 'attention'); table.insert(fields, ARGV[11]) else redis.call('HDEL', KEYS[1], 'attention') end
elseif outcome == 'unknown' then
  table.insert(fields, 'state'); table.insert(fields, 'unknown')
  table.insert(fields, 'ambiguous'); table.insert(fields, '1')
elseif outcome == 'rejected' then
  -- A rejection of the very bytes that may have landed before proves they did not (docs/vat.md).
  table.insert(fields, 'state'); table.insert(fields, 'rejected')
  table.insert(fields, 'ambiguous'); table.insert(fields, '0')
else
  table.insert(fields, 'state'); table.insert(fields, outcome)
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HDEL', KEYS[1], 'token', 'lease_until')
if ARGV[10] == '1' then redis.call('HINCRBY', KEYS[1], 'resends', -1) end
-- Unknown and released (pending) entries stay in the open index: if their job is gone (out of
-- attempts, a dead letter), the resolver brings the record back.
if outcome == 'unknown' or outcome == 'pending' then redis.call('ZADD', KEYS[3], tonumber(ARGV[4]), KEYS[1]) else redis.call('ZREM', KEYS[3], KEYS[1]) end
history(ARGV[2] == outcome and outcome or (ARGV[2] .. ':' .. outcome))
return 1
`;

// Drops a claim never sent that its record no longer needs.
// KEYS: 1 entry, 2 index, 3 the record's own set, 4 history, 5 open index. ARGV: 1 record.
export const WITHDRAW = `
local e = redis.call('HMGET', KEYS[1], 'state', 'record', 'ambiguous')
if e[1] ~= 'pending' or e[2] ~= ARGV[1] or e[3] == '1' then return 0 end
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('SREM', KEYS[2], KEYS[1])
redis.call('SREM', KEYS[3], KEYS[1])
redis.call('ZREM', KEYS[5], KEYS[1])
return 1
`;

// An operator's decision on an entry whose outcome taxsync cannot know (docs/vat.md, "Operator").
// KEYS: 1 entry, 2 history, 3 open index. ARGV: 1 action (confirm | release), 2 actor, 3 iso now,
// 4 the caller's now ms (the open index), 5 history max, 6 shift of Redis's clock ms.
// Returns {'ok', previous state} or {'no', reason}.
export const OPERATOR = `${REDIS_NOW('ARGV[6]')}
local e = redis.call('HMGET', KEYS[1], 'state', 'lease_until', 'attempts', 'body_hash')
local state = e[1]
if not state then return {'no', 'no such ledger entry'} end
if state == 'in_flight' and tonumber(e[2] or '0') > now then
  return {'no', 'an attempt is in flight right now; wait for its lease to run out'}
end
if state ~= 'unknown' and state ~= 'unresolved' and state ~= 'in_flight' then
  return {'no', 'the entry is ' .. state .. ': only an unknown or unresolved outcome needs an operator'}
end
if ARGV[1] == 'confirm' then
  redis.call('HSET', KEYS[1], 'state', 'confirmed', 'note', 'confirmed by ' .. ARGV[2] .. ' after checking the filing', 'updated_at', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'state', 'pending', 'ambiguous', '0', 'resends', '0', 'note',
    'released by ' .. ARGV[2] .. ': not in the filing, to be sent again', 'updated_at', ARGV[3])
end
redis.call('HDEL', KEYS[1], 'token', 'lease_until')
-- A released entry is open again (pending): indexed, so it is sent even if its record's job is gone.
if ARGV[1] == 'confirm' then redis.call('ZREM', KEYS[3], KEYS[1]) else redis.call('ZADD', KEYS[3], tonumber(ARGV[4]), KEYS[1]) end
redis.call('RPUSH', KEYS[2], cjson.encode({at = ARGV[3], attempt = tonumber(e[3] or '0'), outcome = 'operator:' .. ARGV[1], body_hash = e[4] or '', note = ARGV[2]}))
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
return {'ok', state}
`;

// An operator replay of a rejected submission: back to pending, in one step, so it can never
// overwrite an attempt that claimed the entry meanwhile (a job sending a changed body).
// KEYS: 1 entry, 2 history, 3 open index. ARGV: 1 iso now, 2 now ms, 3 history max.
// Returns 1 when reopened, 0 when the entry is not rejected.
export const REOPEN = `
local e = redis.call('HMGET', KEYS[1], 'state', 'attempts', 'body_hash')
if e[1] ~= 'rejected' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'pending', 'note', 'reopened for a replay', 'updated_at', ARGV[1])
redis.call('ZADD', KEYS[3], tonumber(ARGV[2]), KEYS[1])
redis.call('RPUSH', KEYS[2], cjson.encode({at = ARGV[1], attempt = tonumber(e[2] or '0'), outcome = 'reopened', body_hash = e[3] or ''}))
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
return 1
`;
