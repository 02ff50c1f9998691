import type { RedisClient } from './connection.js';
import { TaxsyncError } from '../domain/errors.js';
import { money, Money, type Decimal } from '../domain/money.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Keys } from './keys.js';
import { acquireLease, setNx } from './lease.js';

/**
 * The fraction of each invoice that its refunds claimed, so refunds of one invoice never add up
 * past 1 (DESIGN.md invariant 4). One hash per invoice: refund external id → fraction.
 */
export interface RefundLedger {
  /** The sum claimed by the invoice's other refunds. */
  claimedByOthers(invoice: RecordKey, refundExternalId: string): Promise<Decimal>;
  /** What the invoice's other refunds claimed, and what this refund claimed (0: nothing yet), in one read. */
  claims(invoice: RecordKey, refundExternalId: string): Promise<{ others: Decimal; own: Decimal }>;
  /** The refund's share as the engine holds it now (its write was answered). */
  record(invoice: RecordKey, refundExternalId: string, fraction: Decimal): Promise<void>;
  /**
   * Right before the refund's write goes out: from then on the engine may hold `fraction` (a
   * write applied whose answer is lost) or still the share recorded before, so the larger of the
   * two is kept until the write is answered (`record`). A version that never gets an answer
   * (retried, dead-lettered, its worker killed) leaves the larger share claimed: the invoice's
   * other refunds are checked against it, never against less than the engine may hold.
   */
  reserve(invoice: RecordKey, refundExternalId: string, fraction: Decimal): Promise<void>;
  forget(invoice: RecordKey, refundExternalId: string): Promise<void>;
  /**
   * Runs `fn` holding the invoice's refund lock, so two refunds of one invoice are checked and sent
   * one after the other (each sees what the other claimed). A held lock is a retryable RECORD_BUSY.
   */
  withInvoiceLock<T>(invoice: RecordKey, fn: () => Promise<T>): Promise<T>;
}

/**
 * Short, and renewed while its holder works (./lease.ts): a holder that dies (a killed worker)
 * frees the invoice's refunds within LOCK_MS, while a live one keeps it however long its calls take.
 */
const LOCK_MS = 15_000;

export function createRefundLedger(redis: RedisClient, keys: Keys): RefundLedger {
  const key = (invoice: RecordKey) => keys.refunds(recordKeyString(invoice));
  return {
    async claimedByOthers(invoice, refundExternalId) {
      const all = await redis.hgetall(key(invoice));
      let sum = new Money(0);
      for (const [id, fraction] of Object.entries(all)) if (id !== refundExternalId) sum = sum.plus(money(fraction));
      return sum;
    },
    async claims(invoice, refundExternalId) {
      const all = await redis.hgetall(key(invoice));
      let others = new Money(0);
      let own = new Money(0);
      for (const [id, fraction] of Object.entries(all)) {
        if (id === refundExternalId) own = money(fraction);
        else others = others.plus(money(fraction));
      }
      return { others, own };
    },
    async record(invoice, refundExternalId, fraction) {
      await redis.hset(key(invoice), refundExternalId, fraction.toFixed());
    },
    async reserve(invoice, refundExternalId, fraction) {
      // Under the invoice's lock (withInvoiceLock): no other refund of the invoice writes meanwhile.
      const held = await redis.hget(key(invoice), refundExternalId);
      if (held === null || money(held).lessThan(fraction)) await redis.hset(key(invoice), refundExternalId, fraction.toFixed());
    },
    async forget(invoice, refundExternalId) {
      await redis.hdel(key(invoice), refundExternalId);
    },
    async withInvoiceLock(invoice, fn) {
      const lock = `${key(invoice)}:lock`;
      const held = await acquireLease(redis, lock, { ttlMs: LOCK_MS }, setNx(redis, lock, LOCK_MS));
      if (held === undefined) throw new TaxsyncError('RECORD_BUSY', `another refund of invoice ${invoice.external_id} is being sent`);
      try {
        return await fn();
      } finally {
        await held.lease.release();
      }
    },
  };
}
