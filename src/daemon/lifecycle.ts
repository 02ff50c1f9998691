import { TaxsyncError } from '../domain/errors.js';
import type { Logger } from '../observability/logger.js';

export type Closer = () => Promise<void>;

export interface Lifecycle {
  /** Registers a step of the shutdown; steps run in reverse order of registration. */
  onShutdown(name: string, close: Closer): void;
  /** Runs the shutdown once (later calls wait for the first), each step bounded by what is left of the deadline. */
  shutdown(reason: string): Promise<void>;
}

/**
 * The one shutdown path (STYLE.md habit 7): stop taking work, let in-flight work finish within a
 * deadline, then close Redis and HTTP. Steps that overrun are abandoned, not awaited forever.
 */
export function createLifecycle(options: { logger: Logger; deadlineMs: number }): Lifecycle {
  const steps: { name: string; close: Closer }[] = [];
  let running: Promise<void> | undefined;

  async function run(reason: string): Promise<void> {
    const started = Date.now();
    options.logger.info({ reason, deadlineMs: options.deadlineMs }, 'shutting down');
    for (const step of [...steps].reverse()) {
      const left = Math.max(0, options.deadlineMs - (Date.now() - started));
      let timer: NodeJS.Timeout | undefined;
      const overran = new Promise<'overran'>((resolve) => {
        timer = setTimeout(() => resolve('overran'), left);
      });
      try {
        const outcome = await Promise.race([step.close().then(() => 'done' as const), overran]);
        if (outcome === 'overran') options.logger.warn({ step: step.name }, 'shutdown step overran the deadline');
      } catch (error) {
        options.logger.error({ err: error, step: step.name }, 'shutdown step failed');
      } finally {
        clearTimeout(timer);
      }
    }
    options.logger.info({ ms: Date.now() - started }, 'stopped');
  }

  return {
    onShutdown: (name, close) => steps.push({ name, close }),
    shutdown: (reason) => (running ??= run(reason)),
  };
}

/**
 * Runs a command's start-up. When it fails (a port in use, a source change refused, Redis
 * unreachable…), everything it had already started — the local redis-server, workers, the
 * emulator, connections — is stopped through the one shutdown path before the error goes on to
 * the one-line exit, so nothing is left running behind a failed start.
 */
export async function startOrStop<T>(lifecycle: Lifecycle, what: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    await lifecycle.shutdown(`${what} failed`);
    throw error;
  }
}

/** Entry points call this: SIGTERM/SIGINT → shutdown → exit code. A second signal exits at once. */
export function exitOnSignals(lifecycle: Lifecycle, logger: Logger): void {
  let signalled = false;
  const handler = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    signalled = true;
    void lifecycle.shutdown(signal).then(() => process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * A listener that could not start, as one line naming the address and what to do (LISTEN_FAILED);
 * any other error is returned unchanged.
 */
export function listenError(error: unknown, where: { host: string; port: number; variable: string }): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const address = `${where.host}:${where.port}`;
  const another = where.port > 0 && where.port < 65_535 ? where.port + 1 : 8080;
  const advice =
    code === 'EADDRINUSE'
      ? `the port is in use: stop what listens there, or choose another port, e.g. ${where.variable}=${another}`
      : code === 'EACCES'
        ? `not allowed to listen there (ports below 1024 need privileges): choose another port, e.g. ${where.variable}=8080`
        : code === 'EADDRNOTAVAIL'
          ? 'no network interface has that address: check TAXSYNC_HTTP_HOST'
          : undefined;
  if (advice === undefined) return error;
  return new TaxsyncError('LISTEN_FAILED', `cannot listen on ${address} (${code}): ${advice}`, { cause: error, details: { address, code } });
}
