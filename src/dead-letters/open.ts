import type { Queue } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import type { Connections } from '../config/connections.js';
import { createAuditLog } from '../queue/audit.js';
import type { RedisClient } from '../queue/connection.js';
import { createDeadLetterStore } from '../queue/dead-letter.js';
import { createKeys } from '../queue/keys.js';
import type { QueueName } from '../queue/names.js';
import { configuredProducer } from '../queue/configured-producer.js';
import { createRecordStore } from '../queue/record-state.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import type { DlqDeps } from './service.js';

/**
 * The dead-letter tools' dependencies over one ready connection and its queues. The producer is
 * the one the webhook server sends with too, so replays and webhooks queue work the same way.
 */
export function createDlqDeps(
  connection: RedisClient,
  queues: Readonly<Record<QueueName, Queue>>,
  config: Config,
  settings: Settings,
  options: { actor?: string; connections?: Connections } = {},
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
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    trace: config.trace,
    retry: config.queue.retry,
  };
}
