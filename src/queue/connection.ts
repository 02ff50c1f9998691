import { Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { QUEUE_NAMES, type QueueName } from './names.js';

export type ConnectionRole = 'producer' | 'worker';

/**
 * How long a producer command may wait for Redis's answer. A Redis that is unreachable without
 * refusing (stopped, partitioned: the socket stays open) would otherwise hold every webhook, and
 * /readyz, until it came back.
 */
export const PRODUCER_COMMAND_TIMEOUT_MS = 2_000;

/**
 * Producers (webhook handlers) fail fast while Redis is away, so a webhook answers 503 instead of
 * hanging or answering 202 with nothing stored: refused or closed connections at once, an
 * unanswered one after PRODUCER_COMMAND_TIMEOUT_MS. A transaction that timed out may still be
 * applied when Redis answers again; the platform's retry of that delivery is then a duplicate.
 * Workers wait and reconnect by themselves (BullMQ requires maxRetriesPerRequest: null for them).
 */
export function createRedis(url: string, role: ConnectionRole, extra: RedisOptions = {}): Redis {
  const common: RedisOptions = {
    connectionName: `taxsync-${role}`,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...extra,
  };
  return role === 'producer'
    ? new Redis(url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS })
    : new Redis(url, { ...common, maxRetriesPerRequest: null, enableOfflineQueue: true });
}

/** Every queue on one shared connection, so one MULTI can span them. */
export function createQueues(connection: Redis, prefix: string): Record<QueueName, Queue> {
  const make = (name: QueueName) => new Queue(name, { connection, prefix });
  return {
    [QUEUE_NAMES.customers]: make(QUEUE_NAMES.customers),
    [QUEUE_NAMES.transactions]: make(QUEUE_NAMES.transactions),
    [QUEUE_NAMES.vatSubmissions]: make(QUEUE_NAMES.vatSubmissions),
    [QUEUE_NAMES.deadLetter]: make(QUEUE_NAMES.deadLetter),
  } as Record<QueueName, Queue>;
}

export async function closeQueues(queues: Record<QueueName, Queue>): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}
