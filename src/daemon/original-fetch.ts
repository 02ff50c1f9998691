import type { Queue } from 'bullmq';
import { originalFetchers } from '../backfill/original.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import type { Connections } from '../config/connections.js';
import { createOriginalFetch, type FetchOriginal } from '../processors/fetch-original.js';
import { configuredProducer } from '../queue/configured-producer.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { QueueName } from '../queue/names.js';

/** One GET of a waiting refund's original, kept short (a job waits on it): one 429 of up to 5 s waited out. */
const FETCH = { timeoutMs: 10_000, rateLimitRetries: 1, maxRetryWaitMs: 5_000 };

/**
 * The transactions worker's fetch of a waiting refund's original (src/processors/fetch-original.ts)
 * when any platform's API credentials are configured; none: nothing (the refund only waits).
 */
export function originalFetch(deps: {
  config: Config;
  settings: Settings;
  connections: Connections;
  /** The queues' connection: the producer's transaction spans them. */
  connection: RedisClient;
  queues: Readonly<Record<QueueName, Queue>>;
  state: RedisClient;
  keys: Keys;
}): { fetchOriginal?: FetchOriginal } {
  const fetchers = originalFetchers(deps.connections.list, FETCH);
  if (Object.keys(fetchers).length === 0) return {};
  const producer = configuredProducer(deps.connection, deps.queues, deps.config, deps.settings);
  return { fetchOriginal: createOriginalFetch({ fetchers, redis: deps.state, keys: deps.keys, producer, markerTtlMs: 2 * deps.config.queue.wait.refundDeadlineMs }) };
}
