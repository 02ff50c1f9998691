import type { Command } from 'commander';
import { createRedis, type RedisClient } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { renderTable } from '../../dead-letters/filter.js';
import { boot } from '../../daemon/boot.js';
import { clientRedis } from '../../daemon/find-daemon.js';
import { createVarianceStore } from '../../variance/store.js';
import { namedConnection } from '../connection-option.js';

export function registerVarianceCommand(program: Command): void {
  program
    .command('variance')
    .description("invoices whose tax charged by the platform differs from the tax the engine computed, above TAXSYNC_TAX_VARIANCE_ABS and TAXSYNC_TAX_VARIANCE_PCT (largest first), each with the connection it belongs to")
    .option('--source <source>', 'only this source')
    .option('--connection <id>', "only this connection's invoices (its source, its prefix)")
    .option('--limit <n>', 'at most this many rows', (v) => Number.parseInt(v, 10), 100)
    .option('--json', 'machine-readable output')
    .action(async (options: { source?: string; connection?: string; limit: number; json?: boolean }) => {
      const booted = boot('variance', { logToStderr: true });
      const { connections } = booted;
      let redis: RedisClient | undefined;
      try {
        const only = options.connection === undefined ? undefined : namedConnection(connections, options.connection);
        if (only !== undefined && options.source !== undefined) throw new Error('give --connection or --source, not both: a connection stands for its source');
        redis = createRedis(await clientRedis(booted), 'worker');
        const keys = createKeys(booted.config.redis.prefix);
        const source = only?.source ?? options.source;
        // A connection's invoices are known only after reading its source's: the limit applies after.
        const listed = await createVarianceStore(redis, keys).list({ ...(source ? { source } : {}), ...(only ? {} : { limit: options.limit }) });
        const all = listed.entries
          .map((e) => ({ ...e, connection: connections.ofRecord(e.record.source, e.record.external_id)?.id ?? null }))
          .filter((e) => only === undefined || e.connection === only.id);
        const found = { total: only ? all.length : listed.total, entries: all.slice(0, options.limit) };
        if (options.json) process.stdout.write(`${JSON.stringify(found)}\n`);
        else if (found.total === 0) process.stdout.write('no tax variance recorded\n');
        else {
          const rows = found.entries.map((e) => [e.connection ?? '-', `${e.record.source}/${e.record.external_id}`, e.currency, e.charged, e.computed, e.difference, e.percent === null ? '-' : `${e.percent}%`, e.at]);
          const more = found.total - found.entries.length;
          process.stdout.write(`${renderTable(['CONNECTION', 'RECORD', 'CURRENCY', 'CHARGED', 'COMPUTED', 'DIFFERENCE', 'SHARE', 'SINCE'], rows)}${more > 0 ? `\n… and ${more} more` : ''}\n`);
        }
      } finally {
        redis?.disconnect();
        await booted.lifecycle.shutdown('variance finished');
      }
    });
}
