import type { Config } from '../config/index.js';
import type { Connections } from '../config/connections.js';
import { guardValue } from '../domain/connection.js';
import { createRedis, type RedisTarget } from '../queue/connection.js';
import { createKeys } from '../queue/keys.js';
import { checkSources } from './source-guard.js';

/** Runs the source-change guard for the connections in use (a platform's default one keeps its platform's entry); a connection's prefix is guarded with its source. */
export async function guardSources(
  config: Config,
  connections: Connections,
  redisTarget: RedisTarget,
  acceptChange: boolean,
): Promise<{ connector: string; from: string; to: string }[]> {
  const redis = createRedis(redisTarget, 'worker');
  try {
    const current = Object.fromEntries(connections.list.filter((c) => c.webhookSecrets.length > 0 || c.declared).map((c) => [c.id, guardValue(c)]));
    return (await checkSources(redis, createKeys(config.redis.prefix), current, { acceptChange })).changed;
  } finally {
    redis.disconnect();
  }
}
