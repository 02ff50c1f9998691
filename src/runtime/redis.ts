import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import { startEmbeddedRedis } from './embedded-redis.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * Where Redis is: REDIS_URL, or the zero-configuration local redis-server (a unix socket path,
 * which ioredis accepts in place of a URL).
 */
export async function resolveRedis(config: Config, dataDir: string, logger: Logger, lifecycle: Lifecycle): Promise<string> {
  if (config.redis.url !== undefined) return config.redis.url;
  const embedded = await startEmbeddedRedis(dataDir);
  logger.info({ socket: embedded.socketPath, owned: embedded.owned }, 'REDIS_URL unset: using a local redis-server (AOF on)');
  if (embedded.owned) lifecycle.onShutdown('local redis-server', embedded.stop);
  return embedded.socketPath;
}
