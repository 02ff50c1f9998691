import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { CanonicalEvent } from '../../src/domain/events.js';
import type { RecordKey } from '../../src/domain/record-key.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys, type Keys } from '../../src/queue/keys.js';
import type { QueueName } from '../../src/queue/names.js';
import { createProducer, type Producer, type ProducerOptions } from '../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../src/queue/record-state.js';
import type { RedisTestContext } from './redis.js';

/**
 * The queue layer as the queue tests set it up: a producer-role connection with the queues on it,
 * the keys, the record store, and a producer (no coalescing delay, a short trace). Fresh for each
 * test; `producerWith` builds another one with other options (an ack guard, a clock).
 */
export interface QueueRig {
  connection: Redis;
  queues: Record<QueueName, Queue>;
  keys: Keys;
  records: RecordStore;
  producer: Producer;
  producerWith(options: Partial<ProducerOptions>): Producer;
}

export const RIG_TRACE = { maxEntries: 10, maxAgeMs: 60_000 };

export function useQueueRig(ctx: RedisTestContext): QueueRig {
  const rig = {} as QueueRig;
  beforeEach(async () => {
    rig.connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => rig.connection.once('ready', resolve));
    rig.queues = createQueues(rig.connection, ctx.prefix);
    rig.keys = createKeys(ctx.prefix);
    rig.records = createRecordStore(ctx.redis, rig.keys);
    rig.producerWith = (options) =>
      createProducer({
        queues: rig.queues,
        connection: rig.connection,
        keys: rig.keys,
        deadLetters: createDeadLetterStore(rig.queues['dead-letter']),
        trace: RIG_TRACE,
        deliveryTtlMs: 60_000,
        coalesceDelayMs: 0,
        ...options,
      });
    rig.producer = rig.producerWith({});
  });
  afterEach(async () => {
    await closeQueues(rig.queues);
    await rig.connection.quit();
  });
  return rig;
}

/** Version `n` (1–9) of a customer record, from the ERP. */
export function customerVersion(record: RecordKey, n: number): CanonicalEvent {
  return CanonicalEvent.parse({
    id: `e-${n}`,
    type: 'customer.upserted',
    occurred_at: `2026-11-20T10:00:0${n}Z`,
    connector: 'erp',
    record,
    data: { name: `name ${n}` },
  });
}
