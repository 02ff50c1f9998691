import type { Redis } from 'ioredis';
import { vatEnabled } from '../mapping/index.js';
import { createAuditLog } from '../queue/audit.js';
import { closeQueues, createQueues, createRedis } from '../queue/connection.js';
import { createDeadLetterStore } from '../queue/dead-letter.js';
import { createKeys } from '../queue/keys.js';
import { createProducer } from '../queue/producer.js';
import { createRecordStore } from '../queue/record-state.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import type { Booted } from './boot.js';
import type { DlqDeps } from './dlq.js';
import { resolveRedis } from './redis.js';

/**
 * The dead-letter tools' dependencies for one CLI run, over one connection (`redis`: a CLI command
 * is its only user, so `dlq prune` may WATCH on it); `close` releases them.
 */
export async function openDlq(booted: Booted, options: { actor?: string } = {}): Promise<{ deps: DlqDeps; redis: Redis; close(): Promise<void> }> {
  const { config, settings, logger, lifecycle } = booted;
  const target = await resolveRedis(config, config.dataDir, logger, lifecycle);
  const connection = createRedis(target, 'producer');
  await new Promise<void>((resolve, reject) => {
    connection.once('ready', () => resolve());
    connection.once('error', (error) => reject(error));
  });
  const queues = createQueues(connection, config.redis.prefix);
  const keys = createKeys(config.redis.prefix);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  const deps: DlqDeps = {
    queues,
    keys,
    deadLetters,
    producer: createProducer({
      queues,
      connection,
      keys,
      deadLetters,
      trace: config.trace,
      deliveryTtlMs: config.webhooks.deliveryTtlMs,
      coalesceDelayMs: config.queue.coalesceDelayMs,
      vat: vatEnabled(settings.vat),
      retry: config.queue.retry,
    }),
    records: createRecordStore(connection, keys),
    ledger: createVatLedger(connection, keys, { leaseMs: config.queue.vat.leaseMs }),
    audit: createAuditLog(connection, keys, options.actor ? { actor: options.actor } : {}),
    settings,
    trace: config.trace,
    retry: config.queue.retry,
  };
  return {
    deps,
    redis: connection,
    async close() {
      await closeQueues(queues);
      connection.disconnect();
    },
  };
}
