import type { RedisClient } from '../queue/connection.js';
import { TaxsyncError } from '../domain/errors.js';
import type { Keys } from '../queue/keys.js';

/**
 * A record's source is part of its key in the tax engine: a connector whose source changed would
 * create a duplicate of every record it touches (spec rule 3). taxsync remembers each connector's
 * source and refuses to start when one changed, unless the operator says it is intended.
 */
export async function checkSources(
  redis: RedisClient,
  keys: Keys,
  current: Readonly<Record<string, string>>,
  options: { acceptChange: boolean },
): Promise<{ changed: { connector: string; from: string; to: string }[] }> {
  const remembered = await redis.hgetall(keys.sources);
  const changed = Object.entries(current)
    .filter(([connector, source]) => remembered[connector] !== undefined && remembered[connector] !== source)
    .map(([connector, to]) => ({ connector, from: remembered[connector]!, to }));
  if (changed.length > 0 && !options.acceptChange) {
    const list = changed.map((c) => `${c.connector}: "${c.from}" → "${c.to}"`).join(', ');
    throw new TaxsyncError(
      'CONFIG_INVALID',
      `the source of a connection changed (${list}; a value is its source and its external_id_prefix, if any); every record it sends would be duplicated in the tax engine. Restore the old source and prefix, or start with --accept-source-change if this is intended`,
    );
  }
  const toStore = Object.entries(current).flat();
  if (toStore.length > 0) await redis.hset(keys.sources, ...toStore);
  return { changed };
}
