import { InvalidArgumentError, type Command } from 'commander';
import { PLATFORMS, connectionAccess } from '../../backfill/access.js';
import { createShopifyLister } from '../../backfill/shopify.js';
import { createStripeLister } from '../../backfill/stripe.js';
import { runOrdersBackfill, runStripeBackfill } from '../../backfill/run.js';
import { createWooLister } from '../../backfill/woocommerce.js';
import { boot } from '../../daemon/boot.js';
import { clientRedis } from '../../daemon/find-daemon.js';
import { closeQueues, createQueues, createRedis, whenReady } from '../../queue/connection.js';
import { configuredProducer } from '../../queue/configured-producer.js';
import { createKeys } from '../../queue/keys.js';
import { parseSince } from '../../reconcile/since.js';
import { namedConnection } from '../connection-option.js';
import { createProgress } from '../progress.js';


export function registerBackfillCommand(program: Command): void {
  program
    .command('backfill')
    .description("catch up after an outage: read the platform's own API (Stripe: invoices and credit notes; Shopify, WooCommerce: orders and their refunds) since a time, through the same connector and dedupe as webhooks; resumable")
    .option('--connection <id>', 'the connection to read (docs/connections.md)')
    .option('--source <platform>', `the platform's default connection (${PLATFORMS.join(', ')}); the same as --connection <platform>`, (v) => {
      if (!(PLATFORMS as readonly string[]).includes(v)) throw new InvalidArgumentError(`one of ${PLATFORMS.join(', ')}`);
      return v;
    })
    .requiredOption('--since <when>', 'a date, a date-time with zone, or an age (6h, 7d)')
    .option('--fresh', 'ignore the checkpoint of an interrupted run with the same --since')
    .option('--json', 'machine-readable summary')
    .action(async (options: { connection?: string; source?: string; since: string; fresh?: boolean; json?: boolean }) => {
      const booted = boot('backfill', { logToStderr: true });
      const { config, settings, lifecycle } = booted;
      const progress = createProgress();
      try {
        const since = parseSince(options.since, new Date());
        if ((options.connection === undefined) === (options.source === undefined)) throw new Error('name the connection to read: --connection <id> (or --source <platform> for its default connection)');
        const read = namedConnection(booted.connections, options.connection ?? options.source!);
        const access = connectionAccess(read);
        if (access === undefined) throw new Error(`connection "${read.id}" is of ${read.platform}, whose API taxsync does not read (${PLATFORMS.join(', ')} only)`);
        if (!access.ok) throw new Error(`connection "${read.id}": ${access.missing}`);
        const connection = createRedis(await clientRedis(booted), 'producer');
        lifecycle.onShutdown('redis', async () => {
          connection.disconnect();
          await Promise.resolve();
        });
        await whenReady(connection);
        const queues = createQueues(connection, config.redis.prefix);
        lifecycle.onShutdown('queues', () => closeQueues(queues));
        const common = {
          redis: connection,
          keys: createKeys(config.redis.prefix),
          trace: config.trace,
          producer: configuredProducer(connection, queues, config, settings),
          connection: read,
          onProgress: (resource: string, listed: number) => progress.update(`backfill ${read.id} ${resource}`, listed),
        };
        const run = { since, fresh: options.fresh === true };
        const { access: platform } = access;
        const summary =
          platform.platform === 'shopify'
            ? await runOrdersBackfill('shopify', { ...common, lister: createShopifyLister(platform) }, run)
            : platform.platform === 'woocommerce'
              ? await runOrdersBackfill('woocommerce', { ...common, lister: createWooLister(platform) }, run)
              : await runStripeBackfill({ ...common, lister: createStripeLister(platform) }, run);
        progress.stop();
        if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else {
          const resumed = summary.resumed_after === null ? '' : ` (resumed after ${summary.resumed_after})`;
          process.stdout.write(
            `${summary.listed} listed${resumed}: ${summary.queued} queued, ${summary.known} already known, ${summary.ignored} ignored, ${summary.invalid.length} invalid\n` +
              summary.invalid.map((i) => `  invalid ${i.id}: ${i.message}\n`).join(''),
          );
        }
        if (summary.invalid.length > 0) process.exitCode = 2;
      } finally {
        progress.stop();
        await lifecycle.shutdown('backfill finished');
      }
    });
}
