import type { Config } from '../config/index.js';
import type { RedisTarget } from '../queue/connection.js';
import type { Logger } from '../observability/logger.js';
import { startEmbeddedRedis } from './embedded-redis.js';
import type { Lifecycle } from './lifecycle.js';

/** The Redis REDIS_URL names (a cluster seed with REDIS_CLUSTER=1); undefined when it is unset. */
export function configuredRedis(config: Config): RedisTarget | undefined {
  const { url, cluster } = config.redis;
  return url === undefined ? undefined : cluster ? { clusterSeed: url } : url;
}

/**
 * Where Redis is: REDIS_URL, or the zero-configuration local redis-server (a unix socket path,
 * which ioredis accepts in place of a URL).
 */
export async function resolveRedis(config: Config, dataDir: string, logger: Logger, lifecycle: Lifecycle): Promise<RedisTarget> {
  const configured = configuredRedis(config);
  if (configured !== undefined) return configured;
  const embedded = await startEmbeddedRedis(dataDir);
  logger.info({ socket: embedded.socketPath, owned: embedded.owned }, 'REDIS_URL unset: using a local redis-server (AOF on)');
  if (embedded.owned) lifecycle.onShutdown('local redis-server', embedded.stop);
  return embedded.socketPath;
}
