import type { RedisClient } from './connection.js';
import { TaxsyncError } from '../domain/errors.js';
import { InvoiceCustomer, type CanonicalEvent } from '../domain/events.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Keys } from './keys.js';
import { acquireLease, type Lease } from './lease.js';
import { parseStored } from './record-state.js';
import { scriptOn } from './redis-scripts.js';

/**
 * One writer per customer at a time (docs/mapping.md, "Customer facts before the invoice"). A
 * customer is written to the tax engine by its own job and by the job of every invoice that
 * states facts about it (exempt flag, type, tax number, addresses); each of them takes the
 * customer's writer lock around its call, so no two writes of one customer overlap, and decides
 * the body under it from what the customer's state holds then: its own newest event and the
 * newest facts an invoice stated (`facts`, `facts_at`: kept by time, the newest wins). Whoever
 * writes last therefore writes the newest facts, and the customer's `sent_hash` is kept only by
 * the holder of the lock, so it always describes what the engine holds.
 *
 * A holder whose lock ran out while its write was on its way (a process frozen longer than the
 * lock) may have had its write land after the next holder's: it bumps `writer_gen` and clears the
 * hash, so no hash kept by a writer of that generation is trusted, and writes again.
 */
export interface CustomerWriteState {
  /** A hash of the body the engine last accepted for this customer (undefined: not known). */
  sentHash: string | undefined;
  /** The newest facts an invoice stated about the customer, and that invoice's time (epoch ms). */
  facts: { customer: InvoiceCustomer; atMs: number } | undefined;
  /** occurred_at (epoch ms) of the customer's own newest event, applied or not; undefined: none. */
  ownAtMs: number | undefined;
  /** The customer's own version the engine may hold (its applied copy), when it still parses. */
  applied: CanonicalEvent | undefined;
}

export interface CustomerWriter {
  readonly state: CustomerWriteState;
  /**
   * Right before a write goes out: the hash no longer describes what the engine holds, so it is
   * cleared (`hashCleared`: the customer's own job cleared it already, with its version's copy).
   */
  sending(options?: { hashCleared?: boolean }): Promise<void>;
  /**
   * The write was accepted: keeps its hash (null: keeps none) and gives the lock back. Throws a
   * RECORD_BUSY when the lock ran out meanwhile: the customer is written again by the caller's
   * next attempt, after whatever landed before.
   */
  accepted(hash: string | null): Promise<void>;
  /** Gives the lock back without keeping a hash (no write went out, or it failed). */
  release(): Promise<void>;
  /** Stops renewing the lock, which then expires by itself: what a frozen or killed process leaves (tests). */
  abandon(): void;
}

export interface CustomerWriters {
  /**
   * Takes the customer's writer lock, waiting a moment while another writer holds it (then a
   * retryable RECORD_BUSY), and reads the customer's state under it. `offer`: an invoice's facts
   * about the customer and the invoice's time, kept as the newest facts when they are newer.
   */
  take(customer: RecordKey, offer?: { customer: InvoiceCustomer; atMs: number }): Promise<CustomerWriter>;
}

export interface CustomerWriterOptions {
  /** The lock's time to live (renewed while its holder works). @defaultValue 15000 */
  ttlMs?: number;
  /** How long a writer waits for another to finish before its job tries again later. @defaultValue 5000 */
  waitMs?: number;
}

// Takes the writer lock and reads the customer's state in one step; keeps the offered facts when
// they are newer than the ones held (a tie keeps those held). KEYS: lock, state, applied. ARGV: 1
// token, 2 ttl ms, 3 the offered facts' JSON ('' = none), 4 their time ms. Returns false when
// another writer holds the lock, else [sent_hash, facts, facts_at, event_at, writer_gen, applied]
// ('' for what is not there).
const TAKE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return false end
if ARGV[3] ~= '' then
  local held = tonumber(redis.call('HGET', KEYS[2], 'facts_at') or '')
  if held == nil or tonumber(ARGV[4]) > held then redis.call('HSET', KEYS[2], 'facts', ARGV[3], 'facts_at', ARGV[4]) end
end
local f = redis.call('HMGET', KEYS[2], 'sent_hash', 'facts', 'facts_at', 'event_at', 'writer_gen', 'applied_event')
local applied = redis.call('GET', KEYS[3]) or f[6]
return { f[1] or '', f[2] or '', f[3] or '', f[4] or '', f[5] or '0', applied or '' }
`;

// Ends a write: gives the lock back and keeps the hash of the body accepted, when this writer
// still holds the lock and no writer of its generation lost the lock since it read. A writer that
// lost its lock after a write went out bumps the generation and clears the hash (its write may
// have landed after the next holder's). KEYS: lock, state. ARGV: 1 token, 2 the generation read,
// 3 the hash to keep ('' = none), 4 '1' when a write went out. Returns 'kept', 'released' or 'lost'.
const FINISH = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if ARGV[4] == '1' then
    redis.call('HINCRBY', KEYS[2], 'writer_gen', 1)
    redis.call('HDEL', KEYS[2], 'sent_hash')
  end
  return 'lost'
end
redis.call('DEL', KEYS[1])
if ARGV[3] == '' or (redis.call('HGET', KEYS[2], 'writer_gen') or '0') ~= ARGV[2] then return 'released' end
redis.call('HSET', KEYS[2], 'sent_hash', ARGV[3])
return 'kept'
`;

function parseFacts(json: string, at: string): CustomerWriteState['facts'] {
  if (json === '' || at === '') return undefined;
  try {
    const customer = InvoiceCustomer.safeParse(JSON.parse(json));
    return customer.success ? { customer: customer.data, atMs: Number(at) } : undefined;
  } catch {
    return undefined;
  }
}

export function createCustomerWriters(redis: RedisClient, keys: Keys, options: CustomerWriterOptions = {}): CustomerWriters {
  const ttlMs = options.ttlMs ?? 15_000;
  const waitMs = options.waitMs ?? 5_000;
  // On every invoice with customer facts: run by SHA, not sent as text each time.
  const take = scriptOn(redis, 'taxsyncCustomerWriterTake', 3, TAKE);
  const finishScript = scriptOn(redis, 'taxsyncCustomerWriterFinish', 2, FINISH);
  return {
    async take(customer, offer) {
      const recordKey = recordKeyString(customer);
      const lockKey = `${keys.state(recordKey)}:writer`;
      const stateKey = keys.state(recordKey);
      const offered = offer === undefined ? ['', ''] : [JSON.stringify(offer.customer), offer.atMs];
      const held = await acquireLease(redis, lockKey, { ttlMs, waitMs }, async (token) => {
        const read = (await take(lockKey, stateKey, keys.applied(recordKey), token, ttlMs, ...offered)) as string[] | null;
        return read ?? undefined;
      });
      if (held === undefined) throw new TaxsyncError('RECORD_BUSY', `customer ${customer.external_id} is being written by another job`);
      const [sentHash = '', facts = '', factsAt = '', eventAt = '', gen = '0', applied = ''] = held.taken;
      return writer(held.lease, customer, stateKey, gen, {
        sentHash: sentHash === '' ? undefined : sentHash,
        facts: parseFacts(facts, factsAt),
        ownAtMs: eventAt === '' ? undefined : Number(eventAt),
        applied: parseStored(applied),
      });
    },
  };

  function writer(lease: Lease, customer: RecordKey, stateKey: string, gen: string, state: CustomerWriteState): CustomerWriter {
    let wrote = false;
    let done = false;
    const finish = async (hash: string): Promise<string> => {
      if (done) return 'released';
      done = true;
      lease.abandon();
      return String(await finishScript(lease.key, stateKey, lease.token, gen, hash, wrote ? '1' : ''));
    };
    return {
      state,
      async sending(options = {}) {
        wrote = true;
        if (!options.hashCleared) await redis.hdel(stateKey, 'sent_hash');
      },
      async accepted(hash) {
        wrote = true;
        if ((await finish(hash ?? '')) === 'lost') {
          throw new TaxsyncError('RECORD_BUSY', `customer ${customer.external_id}: the writer lock ran out while its write was on its way; it is written again`);
        }
      },
      async release() {
        await finish('');
      },
      abandon() {
        lease.abandon();
      },
    };
  }
}
