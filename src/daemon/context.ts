import type { RedisTarget } from '../queue/connection.js';
import { createKeys, type Keys } from '../queue/keys.js';
import { boot, type Booted } from './boot.js';
import type { Connections } from '../config/connections.js';
import { withDevSecrets } from './connectors.js';
import { guardSources } from './guard.js';
import { resolveRedis } from './redis.js';

export type DaemonCommand = 'start' | 'serve' | 'work';

/** What every daemon process builds first, in the same order, with the same guards. */
export interface DaemonContext extends Booted {
  command: DaemonCommand;
  redisTarget: RedisTarget;
  keys: Keys;
  /** The connections, with the development webhook secrets `start` gives on the emulator. */
  connections: Connections;
}

export interface DaemonOptions {
  /** `--accept-source-change`: start although a connector's source changed (DESIGN.md invariant 3). */
  acceptSourceChange?: boolean;
}

/** Config, logger and the one shutdown path; nothing started yet (so a failed start has nothing to stop). */
export function bootDaemon(command: DaemonCommand): Booted & { command: DaemonCommand } {
  return { ...boot(command), command };
}

/**
 * Redis, keys and secrets, and the source guard: every entry point (`start`, `serve`, `work`, the
 * files in workers/) goes through here, so none can skip the guard. Run it inside startOrStop.
 */
export async function openDaemon(booted: Booted & { command: DaemonCommand }, options: DaemonOptions): Promise<DaemonContext> {
  const { config, logger, lifecycle } = booted;
  const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
  // Development secrets only for `start` on the emulator: nothing can leak to production.
  const connections = withDevSecrets(booted.connections, booted.command === 'start' && config.usesEmulator);
  const changed = await guardSources(config, connections, redisTarget, options.acceptSourceChange === true);
  for (const c of changed) logger.warn(c, 'connection source changed (accepted)');
  return { ...booted, redisTarget, keys: createKeys(config.redis.prefix), connections };
}
