import type { Booted } from '../daemon/boot.js';
import { clientRedis } from '../daemon/find-daemon.js';
import type { DlqDeps } from '../dead-letters/service.js';
import { createDlqDeps } from '../dead-letters/open.js';
import { closeQueues, createQueues, createRedis, whenReady, type RedisClient } from '../queue/connection.js';

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
    deps: createDlqDeps(connection, queues, config, settings, { ...options, connections: booted.connections }),
    redis: connection,
    async close() {
      await closeQueues(queues);
      connection.disconnect();
    },
  };
}
