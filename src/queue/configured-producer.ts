import type { Queue } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { vatEnabled } from '../mapping/index.js';
import { createAckGuard } from './ack-durability.js';
import type { RedisClient } from './connection.js';
import { createDeadLetterStore, type DeadLetterStore } from './dead-letter.js';
import { createKeys } from './keys.js';
import type { QueueName } from './names.js';
import { createProducer, type Producer } from './producer.js';

/**
 * The producer as the configuration asks for it: the webhook server, the dead-letter tools and
 * `ingest` queue work the same way (trace, delivery TTL, coalescing delay, VAT, retry policies).
 */
export function configuredProducer(
  connection: RedisClient,
  queues: Readonly<Record<QueueName, Queue>>,
  config: Config,
  settings: Settings,
  deadLetters: DeadLetterStore = createDeadLetterStore(queues['dead-letter']),
): Producer {
  const keys = createKeys(config.redis.prefix);
  return createProducer({
    queues,
    connection,
    keys,
    deadLetters,
    trace: config.trace,
    deliveryTtlMs: config.webhooks.deliveryTtlMs,
    // Jobs run at once: a lone update is sent without delay, and the workers hold a record that is
    // in a burst until it goes quiet (TAXSYNC_COALESCE_MS, src/processors/record-processor.ts).
    coalesceDelayMs: 0,
    vat: vatEnabled(settings.vat),
    // The attempts of every job come from here (TAXSYNC_MAX_ATTEMPTS), not from the workers.
    retry: config.queue.retry,
    ack: createAckGuard(connection, { mode: config.ack.durability, timeoutMs: config.ack.timeoutMs, slotKey: keys.counters }),
  });
}
