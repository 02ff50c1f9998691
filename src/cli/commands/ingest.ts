import type { Command } from 'commander';
import { boot } from '../../daemon/boot.js';
import { ingestFile } from '../../ingest/file.js';
import { closeQueues, createQueues, createRedis, whenReady } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { configuredProducer } from '../../queue/configured-producer.js';
import { clientRedis } from '../../daemon/find-daemon.js';

function progressBar(done: number, total: number | undefined): void {
  if (!process.stderr.isTTY || !total) return;
  const share = Math.min(1, done / total);
  const width = 30;
  const filled = Math.round(share * width);
  process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%`);
}

export function registerIngestCommand(program: Command): void {
  program
    .command('ingest')
    .argument('<file>', 'JSON-lines file, one canonical event per line')
    .description('backfill canonical events from a file (the ERP connector\'s rules); safe to run again after an interruption')
    .option('--restart', 'ignore the checkpoint of an earlier run and read the whole file again')
    .option('--json', 'machine-readable summary')
    .action(async (file: string, options: { restart?: boolean; json?: boolean }) => {
      const booted = boot('ingest', { logToStderr: true });
      const { config, settings, lifecycle } = booted;
      const connection = createRedis(await clientRedis(booted), 'producer');
      await whenReady(connection).catch(async (error: unknown) => {
        connection.disconnect();
        await lifecycle.shutdown('ingest could not reach Redis');
        throw error;
      });
      const queues = createQueues(connection, config.redis.prefix);
      const keys = createKeys(config.redis.prefix);
      try {
        const summary = await ingestFile({
          file,
          keys,
          redis: connection,
          restart: options.restart === true,
          source: settings.sources.erp ?? 'api',
          producer: configuredProducer(connection, queues, config, settings),
          onProgress: progressBar,
        });
        if (process.stderr.isTTY) process.stderr.write('\n');
        if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else {
          const resumed = summary.resumedAfter > 0 ? ` (resumed after line ${summary.resumedAfter})` : '';
          process.stdout.write(
            `${summary.lines} lines${resumed}: ${summary.queued} queued, ${summary.duplicate} already known, ` +
              `${summary.stale} stale, ${summary.invalid} invalid (dead-lettered), ${summary.blank} blank\n`,
          );
        }
        if (summary.invalid > 0) process.exitCode = 2;
      } finally {
        await closeQueues(queues);
        connection.disconnect();
        await lifecycle.shutdown('ingest finished');
      }
    });
}
