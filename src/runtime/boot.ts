import { loadConfig, type Config } from '../config/index.js';
import { loadSettings, type Settings } from '../config/settings.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createLifecycle, exitOnSignals, type Lifecycle } from './lifecycle.js';

export interface Booted {
  config: Config;
  settings: Settings;
  logger: Logger;
  lifecycle: Lifecycle;
}

/** Config parsed once, a logger, and the one shutdown path wired to SIGTERM/SIGINT. */
export function boot(name: string, options: { logToStderr?: boolean } = {}): Booted {
  const config = loadConfig();
  const settings = loadSettings(config.configFile);
  // Commands whose stdout is their answer (`vat … --json`) log to stderr.
  const logger = createLogger({ level: config.logLevel, base: { process: name }, ...(options.logToStderr ? { destination: process.stderr } : {}) });
  const lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
  exitOnSignals(lifecycle, logger);
  if (config.usesEmulator) logger.warn('TAX_API_URL is not set: taxsync talks to the built-in emulator, not a real tax engine');
  if (config.allowInsecureHttp) logger.warn('TAXSYNC_ALLOW_INSECURE_HTTP=1: plain http to non-loopback API hosts is allowed (local trials only)');
  return { config, settings, logger, lifecycle };
}
