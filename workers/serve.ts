// Entry point for the webhook server alone (`node dist/workers/serve.js`), e.g. one container per role.
import { exitWith } from '../src/cli/exit.js';
import { boot } from '../src/daemon/boot.js';
import { resolveRedis } from '../src/daemon/redis.js';
import { startServe } from '../src/daemon/serve.js';

async function main(): Promise<void> {
  const { config, settings, logger, lifecycle } = boot('serve');
  const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
  await startServe({ config, settings, redisTarget, logger, lifecycle });
}

main().catch(exitWith);
