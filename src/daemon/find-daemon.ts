import { createApiClients, type ApiClients } from '../api/index.js';
import type { Config } from '../config/index.js';
import { Secret } from '../domain/secret.js';
import type { Logger } from '../observability/logger.js';
import type { RedisTarget } from '../queue/connection.js';
import { connectApi } from './api.js';
import { readDaemonFile, type DaemonInfo } from './daemon-file.js';
import { embeddedSocketPath } from './embedded-redis.js';
import type { Lifecycle } from './lifecycle.js';
import { answersPing } from './redis-probe.js';
import { configuredRedis } from './redis.js';

/**
 * How the commands that are not the daemon (`status`, `trace`, `dlq`, `vat`, `ingest`, `demo`,
 * `faults`) reach Redis and the services: what REDIS_URL / TAX_API_URL say, else what the running
 * `taxsync start` of this folder wrote in `.taxsync/daemon.json`. They never start a
 * redis-server or an emulator of their own: one would hold none of the daemon's data.
 */

export const NO_DAEMON = 'no taxsync daemon is running here (start one with npm start), or set REDIS_URL / TAX_API_URL';

/** There is nothing to talk to: the one-line reason the command exits with. */
export class NoDaemonError extends Error {
  override readonly name = 'NoDaemonError';
}

type Found = { ok: true; info: DaemonInfo } | { ok: false; note?: string };

/** The daemon of this folder, if its process lives and (when it has one) its Redis answers. */
export async function findDaemon(config: Pick<Config, 'dataDir'>): Promise<Found> {
  const found = readDaemonFile(config.dataDir);
  switch (found.state) {
    case 'none':
      return { ok: false };
    case 'unreadable':
      return { ok: false, note: `${config.dataDir}/daemon.json is unreadable (${found.reason})` };
    case 'stale':
      return { ok: false, note: `the daemon that wrote ${config.dataDir}/daemon.json, pid ${found.info.pid}, is gone` };
    case 'running':
      if (found.info.redis_socket !== undefined && !(await answersPing(found.info.redis_socket))) {
        return { ok: false, note: `the Redis of the daemon in ${config.dataDir}/daemon.json (pid ${found.info.pid}) does not answer` };
      }
      return { ok: true, info: found.info };
  }
}

function noDaemon(note: string | undefined): NoDaemonError {
  return new NoDaemonError(note === undefined ? NO_DAEMON : `${NO_DAEMON} (${note})`);
}

/** The daemon of this folder, or a NoDaemonError. */
export async function requireDaemon(config: Pick<Config, 'dataDir'>): Promise<DaemonInfo> {
  const found = await findDaemon(config);
  if (!found.ok) throw noDaemon(found.note);
  return found.info;
}

/**
 * Redis for a command: REDIS_URL, else the running daemon's local redis-server. A local
 * redis-server that answers without a daemon file (a zero-configuration `serve` or `work`) is
 * used too: it holds that daemon's queues.
 */
export async function clientRedis(booted: { config: Config; logger: Logger }): Promise<RedisTarget> {
  const { config, logger } = booted;
  const configured = configuredRedis(config);
  if (configured !== undefined) return configured;
  const found = await findDaemon(config);
  if (found.ok) {
    if (found.info.redis_socket === undefined) {
      throw new NoDaemonError(
        `the taxsync daemon here (pid ${found.info.pid}) uses a configured REDIS_URL: set REDIS_URL to the same Redis to reach its queues`,
      );
    }
    logger.info({ socket: found.info.redis_socket, pid: found.info.pid }, "REDIS_URL unset: using the running daemon's local redis-server");
    return found.info.redis_socket;
  }
  const socket = embeddedSocketPath(config.dataDir);
  if (await answersPing(socket)) {
    logger.info({ socket }, 'REDIS_URL unset: using the local redis-server of this folder');
    return socket;
  }
  throw noDaemon(found.note);
}

/** The running daemon's built-in emulator (with its control API), or a NoDaemonError. */
export async function clientEmulatorUrl(config: Config): Promise<string> {
  const info = await requireDaemon(config);
  if (info.emulator_url === undefined) {
    throw new NoDaemonError(`the taxsync daemon here (pid ${info.pid}) sends to a configured TAX_API_URL, not the built-in emulator: set TAX_API_URL`);
  }
  return info.emulator_url;
}

/**
 * The API clients for a command: the configured services (TAX_API_URL), else the running
 * daemon's built-in emulator with the development credentials it accepts.
 */
export async function clientApi(booted: { config: Config; logger: Logger; lifecycle: Lifecycle }): Promise<ApiClients & { emulatorUrl?: string }> {
  const { config, logger, lifecycle } = booted;
  if (!config.usesEmulator) return connectApi(config, logger, lifecycle);
  const url = await clientEmulatorUrl(config);
  logger.info({ url }, "TAX_API_URL unset: using the running daemon's built-in emulator");
  // Loaded only here: commands that talk to a configured API never load the emulator.
  const { DEFAULT_CLIENT } = await import('../emulator/index.js');
  const clients = createApiClients({
    taxUrl: url,
    clientId: DEFAULT_CLIENT.clientId,
    clientSecret: new Secret(DEFAULT_CLIENT.clientSecret),
    timeouts: config.taxApi.timeouts,
    vatModule: config.vatApi.module,
  });
  lifecycle.onShutdown('api clients', () => clients.close());
  return { ...clients, emulatorUrl: url };
}
