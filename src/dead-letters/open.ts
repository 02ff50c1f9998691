import type { Queue } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { createAuditLog } from '../queue/audit.js';
import { closeQueues, createQueues, createRedis, whenReady, type RedisClient } from '../queue/connection.js';
import { createDeadLetterStore } from '../queue/dead-letter.js';
import { createKeys } from '../queue/keys.js';
import type { QueueName } from '../queue/names.js';
import { configuredProducer } from '../queue/configured-producer.js';
import { createRecordStore } from '../queue/record-state.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import type { Booted } from '../daemon/boot.js';
import type { DlqDeps } from './service.js';
import { clientRedis } from '../daemon/find-daemon.js';

/**
 * The dead-letter tools' dependencies over one ready connection and its queues. The producer is
 * the one the webhook server sends with too, so replays and webhooks queue work the same way.
 */
export function createDlqDeps(
  connection: RedisClient,
  queues: Readonly<Record<QueueName, Queue>>,
  config: Config,
  settings: Settings,
  options: { actor?: string } = {},
): DlqDeps {
  const keys = createKeys(config.redis.prefix);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  return {
    queues,
    keys,
    deadLetters,
    producer: configuredProducer(connection, queues, config, settings, deadLetters),
    records: createRecordStore(connection, keys),
    ledger: createVatLedger(connection, keys, { leaseMs: config.queue.vat.leaseMs }),
    audit: createAuditLog(connection, keys, options.actor ? { actor: options.actor } : {}),
    settings,
    trace: config.trace,
    retry: config.queue.retry,
  };
}

/**
 * The dead-letter tools' dependencies for one CLI run, over one connection (`redis`: a CLI command
 * is its only user, so `dlq prune` may WATCH on it); `close` releases them.
 */
export async function openDlq(booted: Booted, options: { actor?: string } = {}): Promise<{ deps: DlqDeps; redis: RedisClient; close(): Promise<void> }> {
  const { config, settings } = booted;
  // REDIS_URL, else the running daemon's Redis; never a redis-server of its own.
  const connection = createRedis(await clientRedis(booted), 'producer');
  await whenReady(connection).catch((error: unknown) => {
    connection.disconnect();
    throw error;
  });
  const queues = createQueues(connection, config.redis.prefix);
  return {
    deps: createDlqDeps(connection, queues, config, settings, options),
    redis: connection,
    async close() {
      await closeQueues(queues);
      connection.disconnect();
    },
  };
}
