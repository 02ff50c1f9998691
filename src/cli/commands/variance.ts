import type { Command } from 'commander';
import { createRedis } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { renderTable } from '../../dead-letters/filter.js';
import { boot } from '../../daemon/boot.js';
import { clientRedis } from '../../daemon/find-daemon.js';
import { createVarianceStore } from '../../variance/store.js';

export function registerVarianceCommand(program: Command): void {
  program
    .command('variance')
    .description("invoices whose tax charged by the platform differs from the tax the engine computed, above TAXSYNC_TAX_VARIANCE_ABS and TAXSYNC_TAX_VARIANCE_PCT (largest first)")
    .option('--source <source>', 'only this source')
    .option('--limit <n>', 'at most this many rows', (v) => Number.parseInt(v, 10), 100)
    .option('--json', 'machine-readable output')
    .action(async (options: { source?: string; limit: number; json?: boolean }) => {
      const booted = boot('variance', { logToStderr: true });
      const redis = createRedis(await clientRedis(booted), 'worker');
      try {
        const keys = createKeys(booted.config.redis.prefix);
        const found = await createVarianceStore(redis, keys).list({ ...(options.source ? { source: options.source } : {}), limit: options.limit });
        if (options.json) process.stdout.write(`${JSON.stringify(found)}\n`);
        else if (found.total === 0) process.stdout.write('no tax variance recorded\n');
        else {
          const rows = found.entries.map((e) => [`${e.record.source}/${e.record.external_id}`, e.currency, e.charged, e.computed, e.difference, e.percent === null ? '-' : `${e.percent}%`, e.at]);
          const more = found.total - found.entries.length;
          process.stdout.write(`${renderTable(['RECORD', 'CURRENCY', 'CHARGED', 'COMPUTED', 'DIFFERENCE', 'SHARE', 'SINCE'], rows)}${more > 0 ? `\n… and ${more} more` : ''}\n`);
        }
      } finally {
        redis.disconnect();
        await booted.lifecycle.shutdown('variance finished');
      }
    });
}
