import type { OriginalFetcher } from '../backfill/original.js';
import { acceptDelivery, type DeliveryOutcome } from '../backfill/run.js';
import type { ErrorCode } from '../domain/errors.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { Producer } from '../queue/producer.js';

/**
 * A refund waiting for an original taxsync never received asks the original's platform for it
 * (docs/operations.md, "Waiting refunds"), when that platform's API credentials are configured:
 * ONE GET per original while a refund may wait for it (a marker in Redis that lives twice
 * TAXSYNC_REFUND_WAIT), a few at a time per process, with a timeout. What comes back goes through
 * the connector's mapping and the webhooks' dedupe like a backfill, so the webhook of the same
 * state arriving later is a duplicate. A failure is logged with a stable code and named in the
 * refund's wait; it never fails the refund, which keeps waiting and, without its original, is
 * dead-lettered REFUND_ORIGINAL_MISSING as it would be without credentials.
 */

export interface OriginalFetchDeps {
  /** By connection id: only the connections with platform credentials (src/backfill/original.ts). */
  fetchers: Readonly<Record<string, OriginalFetcher>>;
  redis: RedisClient;
  keys: Pick<Keys, 'prefix'>;
  producer: Pick<Producer, 'accept' | 'isDuplicateDelivery'>;
  /** How long an original is not asked for again: longer than a refund waits (twice TAXSYNC_REFUND_WAIT). */
  markerTtlMs: number;
  /** Fetches in flight at once in this process; a refund finding them all busy asks at its next re-check. @defaultValue 2 */
  maxInFlight?: number;
}

/**
 * Asks the platform of connection `connector` (the refund's event's) for `original` unless it was asked already; answers what it did (or
 * did before), to add to the refund's wait reason, or undefined when the platform has no client.
 */
export type FetchOriginal = (connector: string, original: RecordKey, logger: Logger) => Promise<string | undefined>;

const ASKING = 'asking';
/**
 * How long the "asking" mark lives: longer than one fetch can take (a 10 s timeout, one 429 wait
 * of up to 5 s, the queueing), short enough that a process dying mid-fetch delays the next ask by
 * minutes, not by the whole refund wait.
 */
const ASKING_TTL_MS = 120_000;

export function createOriginalFetch(deps: OriginalFetchDeps): FetchOriginal {
  const maxInFlight = deps.maxInFlight ?? 2;
  let inFlight = 0;

  async function ask(fetch: OriginalFetcher, connector: string, original: RecordKey, logger: Logger): Promise<string> {
    const what = `${original.source}/${original.external_id}`;
    const failed = (code: ErrorCode, message: string, extra: Record<string, unknown> = {}) => {
      logger.warn({ code, connector, original: what, ...extra }, message);
      return `${connector} was asked for it: ${message} (${code})`;
    };
    let answer;
    try {
      answer = await fetch(original.external_id, original.source);
    } catch (error) {
      return failed('ORIGINAL_FETCH_FAILED', `the fetch failed: ${(error as Error).message}`);
    }
    if (answer.kind === 'not-found') return failed('ORIGINAL_NOT_ON_PLATFORM', 'the platform has no such original (404)');
    const outcomes: DeliveryOutcome[] = [];
    for (const delivery of answer.deliveries) outcomes.push(await acceptDelivery({ redis: deps.redis, producer: deps.producer }, connector, delivery, { byEventsOnly: true }));
    const first = answer.deliveries[0];
    if (first === undefined || outcomes[0] === 'ignored' || outcomes[0] === 'invalid') {
      const why = first?.result.kind === 'ignored' ? first.result.reason : first?.result.kind === 'invalid' ? first.result.message : 'nothing to map';
      return failed('ORIGINAL_FETCH_FAILED', `the original is not one taxsync sends: ${why}`);
    }
    logger.info({ connector, original: what, outcome: outcomes[0] }, "fetched a waiting refund's original from its platform");
    return `fetched from ${connector} (${outcomes[0]})`;
  }

  return async (connector, original, logger) => {
    const fetch = deps.fetchers[connector];
    if (fetch === undefined) return undefined;
    const marker = `${deps.keys.prefix}:original-fetch:${recordKeyString(original)}`;
    try {
      const previous = await deps.redis.get(marker);
      if (previous !== null) return previous === ASKING ? undefined : previous;
      if (inFlight >= maxInFlight) return undefined;
      inFlight += 1;
      try {
        if ((await deps.redis.set(marker, ASKING, 'PX', Math.min(ASKING_TTL_MS, deps.markerTtlMs), 'NX')) !== 'OK') return undefined;
        let note: string;
        try {
          note = await ask(fetch, connector, original, logger);
        } catch (error) {
          // Not asked after all (Redis or the producer failed while queueing it): the next re-check asks again.
          await deps.redis.del(marker).catch(() => undefined);
          throw error;
        }
        await deps.redis.set(marker, note, 'PX', deps.markerTtlMs);
        return note;
      } finally {
        inFlight -= 1;
      }
    } catch (error) {
      // Redis or the producer failed: the refund's own handling meets the same failure next.
      logger.warn({ code: 'ORIGINAL_FETCH_FAILED' satisfies ErrorCode, connector, original: recordKeyString(original), err: { message: (error as Error).message } }, "could not fetch a waiting refund's original");
      return undefined;
    }
  };
}
