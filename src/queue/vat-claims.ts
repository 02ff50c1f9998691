import { Cluster } from 'ioredis';
import { TaxsyncError } from '../domain/errors.js';
import { createAckGuard, type AckOptions, type AckPlan } from './ack-durability.js';
import type { RedisClient } from './connection.js';

/**
 * Where the VAT ledger writes its claims, and how a claim is made durable before its POST goes out
 * (DESIGN.md invariant 5; docs/vat.md, "Durable claims"). The claim — the entry moved to in flight
 * — is what lets a later duplicate-number answer be read as "accepted by an attempt whose answer was
 * lost". Lost with Redis's memory (a failover to a replica that never got it, a crash of a Redis
 * whose AOF could not take it), it turns taxsync's own filing into a VAT_DUPLICATE conflict. So a
 * claim waits for what a webhook's acknowledgement waits for (TAXSYNC_ACK_DURABILITY:
 * src/queue/ack-durability.ts) before the POST.
 *
 * WAITAOF and WAIT count the writes of the connection they are sent on and block it while they
 * wait: claims get a connection of their own, never the workers' shared auto-pipelined one, whose
 * other commands would wait behind every claim's fsync. Claims answered in the same turn share one
 * check (the guard's group commit).
 */
export interface VatClaims {
  /** The connection claims are written on, and nothing else. */
  readonly connection: RedisClient;
  /** How claims are backed (one line for the start-up log); fails when the mode cannot work on this Redis. */
  ready(): Promise<AckPlan>;
  /** The connection's drop count, taken before a claim is written (see confirm). */
  mark(): number;
  /**
   * Resolves once every claim answered on the connection before the call is as durable as
   * TAXSYNC_ACK_DURABILITY asks; REDIS_NOT_DURABLE otherwise — also when the connection dropped
   * since `mark` (ioredis sends an unanswered WAITAOF / WAIT again on the new connection, where it
   * counts none of the claim's writes and confirms at once).
   */
  confirm(mark: number): Promise<void>;
}

export function createVatClaims(connection: RedisClient, options: AckOptions): VatClaims {
  let drops = 0;
  if (connection instanceof Cluster) {
    connection.on('+node', (node: { on(event: 'close', listener: () => void): void }) => node.on('close', () => (drops += 1)));
  } else {
    connection.on('close', () => (drops += 1));
  }
  const guard = createAckGuard(connection, options);
  return {
    connection,
    ready: () => guard.ready(),
    mark: () => drops,
    async confirm(mark) {
      await guard.confirm(connection);
      if (drops !== mark) {
        throw new TaxsyncError('REDIS_NOT_DURABLE', 'the connection to Redis dropped while the claim was being confirmed: it may not be stored durably', { retryable: true });
      }
    },
  };
}
