import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { createOriginalFetch } from '../../../src/processors/fetch-original.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { Producer } from '../../../src/queue/producer.js';
import { useRedis } from '../../helpers/redis.js';

const ORIGINAL = { kind: 'transaction' as const, source: 'stripe', external_id: 'in_marker' };

/**
 * The once-per-original mark of a waiting refund's fetch: a fetch that could not queue what it got
 * (Redis or the producer failing) leaves no mark, so the refund's next re-check asks again; the
 * original is never silently given up on.
 */
describe("a waiting refund's original fetch", () => {
  const ctx = useRedis();

  it('asks again at the next re-check when queueing the fetched original failed, and only once after it succeeded', async () => {
    let accepts = 0;
    const producer: Pick<Producer, 'accept' | 'isDuplicateDelivery'> = {
      isDuplicateDelivery: () => Promise.resolve(false),
      accept: () => {
        accepts += 1;
        return accepts === 1 ? Promise.reject(new Error('Redis went away')) : Promise.resolve({ outcomes: ['queued'], deadLetters: [] });
      },
    };
    let gets = 0;
    const fetchOriginal = createOriginalFetch({
      fetchers: {
        stripe: () => {
          gets += 1;
          // An empty event list is enough here: what matters is that the producer is called.
          return Promise.resolve({ kind: 'found', deliveries: [{ objectId: 'in_marker', id: 'backfill:in_marker', result: { kind: 'events', events: [] } }] });
        },
      },
      redis: ctx.redis,
      keys: createKeys(ctx.prefix),
      producer,
      markerTtlMs: 60_000,
    });
    const logger = createLogger({ level: 'silent' });

    expect(await fetchOriginal('stripe', ORIGINAL, logger)).toBeUndefined();
    expect(await fetchOriginal('stripe', ORIGINAL, logger)).toBe('fetched from stripe (queued)');
    expect(await fetchOriginal('stripe', ORIGINAL, logger)).toBe('fetched from stripe (queued)');
    expect([gets, accepts]).toEqual([2, 2]);
  });
});
