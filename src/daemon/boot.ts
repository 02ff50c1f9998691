import type { LevelWithSilent } from 'pino';
import { loadConfig, type Config } from '../config/index.js';
import { loadSettings, type Settings } from '../config/settings.js';
import { loadConnections, type Connections } from '../config/connections.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createLifecycle, exitOnSignals, type Lifecycle } from './lifecycle.js';
import { withZeroConfigConnections, withZeroConfigVat } from '../vat-ops/zero-config.js';

export interface Booted {
  config: Config;
  settings: Settings;
  /** The connections (docs/connections.md): the TAXSYNC_CONNECTIONS file's and each platform's default. */
  connections: Connections;
  logger: Logger;
  lifecycle: Lifecycle;
}

export interface BootOptions {
  /**
   * A command whose stdout is its answer (everything but the daemons `start`, `serve`, `work`):
   * it logs to stderr, at `warn` unless LOG_LEVEL or --verbose says otherwise, in readable lines
   * on a terminal and JSON otherwise. The daemons log JSON lines on stdout at LOG_LEVEL (info).
   */
  logToStderr?: boolean;
}

// Set once per run by the program's --verbose (src/cli/program.ts), before any command boots.
let cliVerbose = false;

/** `--verbose`: the commands' logs on stderr at info rather than warn. */
export function setCliVerbose(on: boolean): void {
  cliVerbose = on;
}

const RANK: Record<LevelWithSilent, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 };

/** A command's level: LOG_LEVEL when set, else warn; --verbose makes it at least info. */
export function cliLogLevel(set: LevelWithSilent | undefined, verbose: boolean): LevelWithSilent {
  const level = set ?? 'warn';
  return verbose && RANK[level] > RANK.info ? 'info' : level;
}

/** Config parsed once, a logger, and the one shutdown path wired to SIGTERM/SIGINT. */
export function boot(name: string, options: BootOptions = {}): Booted {
  const config = loadConfig();
  const settings = withZeroConfigVat(config, loadSettings(config.configFile));
  const connections = withZeroConfigConnections(config, loadConnections(config, settings));
  const cli = options.logToStderr === true;
  const logger = cli
    ? createLogger({
        level: cliLogLevel(config.logLevelSet, cliVerbose),
        base: { process: name },
        ...(process.stderr.isTTY ? { pretty: true } : { destination: process.stderr }),
      })
    : createLogger({ level: config.logLevel, base: { process: name } });
  const lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
  exitOnSignals(lifecycle, logger);
  // The commands reach the daemon's emulator (src/daemon/find-daemon.ts): only a daemon sends to one.
  if (config.usesEmulator && !cli) logger.warn('TAX_API_URL is not set: taxsync talks to the built-in emulator, not a real tax engine');
  if (config.allowInsecureHttp) logger.warn('TAXSYNC_ALLOW_INSECURE_HTTP=1: plain http to non-loopback API hosts is allowed (local trials only)');
  return { config, settings, connections, logger, lifecycle };
}
