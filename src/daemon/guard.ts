import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { createRedis, type RedisTarget } from '../queue/connection.js';
import { createKeys } from '../queue/keys.js';
import type { SecretsById } from './connectors.js';
import { sourceOf } from '../connectors/registry.js';
import { checkSources } from './source-guard.js';

/** Runs the source-change guard for the connectors that will take webhooks. */
export async function guardSources(
  config: Config,
  settings: Settings,
  redisTarget: RedisTarget,
  secrets: SecretsById,
  acceptChange: boolean,
): Promise<{ connector: string; from: string; to: string }[]> {
  const redis = createRedis(redisTarget, 'worker');
  try {
    const current = Object.fromEntries(
      Object.entries(secrets)
        .filter(([, list]) => list.length > 0)
        .map(([id]) => [id, sourceOf(id, settings)]),
    );
    return (await checkSources(redis, createKeys(config.redis.prefix), current, { acceptChange })).changed;
  } finally {
    redis.disconnect();
  }
}
