import type { RedisClient } from '../queue/connection.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import type { DeadLetterStore } from '../queue/dead-letter.js';
import type { Keys } from '../queue/keys.js';
import { applyRetention } from './retention.js';

/**
 * Dead-letter retention, run by the workers (`taxsync work`, `taxsync start`) every
 * TAXSYNC_DLQ_RETENTION_INTERVAL_MS once TAXSYNC_DLQ_MAX_ENTRIES or TAXSYNC_DLQ_MAX_AGE_DAYS is
 * set (off by default: entries stay until an operator acts). Every worker process runs it; the
 * Redis lease in applyRetention lets one at a time archive and remove, the others skip that round.
 * Answers whether it was started; stops on shutdown (a run in progress is awaited).
 */
export function scheduleRetention(deps: {
  config: Config;
  deadLetters: Pick<DeadLetterStore, 'all' | 'removeTo'>;
  /** Opens the connection retention runs on, its own (it WATCHes); closed on shutdown. */
  connect: () => RedisClient;
  keys: Keys;
  logger: Logger;
  lifecycle: ShutdownHooks;
}): boolean {
  const { maxEntries, maxAgeDays, archivePath, retentionIntervalMs } = deps.config.deadLetter;
  if (maxEntries <= 0 && maxAgeDays <= 0) return false;
  const redis = deps.connect();
  redis.on('error', (err: Error) => deps.logger.warn({ err: { message: err.message } }, 'redis connection error'));
  const logger = deps.logger.child({ task: 'dead-letter retention' });
  let running: Promise<void> | undefined;
  const tick = (): void => {
    // A run still going when the next is due (a huge queue, a slow disk): skip, never overlap.
    if (running) return;
    running = applyRetention({ deadLetters: deps.deadLetters, redis, keys: deps.keys, logger }, { maxEntries, maxAgeDays }, archivePath)
      .then(
        (result) => {
          if (result.busy) logger.debug('another process holds the retention lease: skipped this round');
        },
        // Entries stay (nothing was removed, or the next run finishes the job): say so, go on.
        (error: unknown) => logger.error({ err: error }, 'dead-letter retention failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, retentionIntervalMs);
  timer.unref();
  deps.lifecycle.onShutdown('dead-letter retention', async () => {
    clearInterval(timer);
    await running;
    redis.disconnect();
  });
  logger.info({ maxEntries, maxAgeDays, archive: archivePath, intervalMs: retentionIntervalMs }, 'dead-letter retention scheduled');
  return true;
}

/** Where a stop is registered (the daemon's lifecycle; it runs at shutdown). */
interface ShutdownHooks {
  onShutdown(name: string, close: () => Promise<void>): void;
}
