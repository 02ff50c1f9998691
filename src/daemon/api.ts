import { createApiClients, createDriftReporter, type ApiCallObserver, type ApiClients, type DriftObserver } from '../api/index.js';
import type { Config } from '../config/index.js';
import { Secret } from '../domain/secret.js';
import type { Logger } from '../observability/logger.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * The API clients of a daemon (`start`, `work`): the configured services, or with TAX_API_URL
 * unset an in-process emulator on a loopback port (the zero-configuration start; said at start and
 * on /healthz). The other commands reach the daemon's emulator instead (find-daemon.ts).
 */
export async function connectApi(
  config: Config,
  logger: Logger,
  lifecycle: Lifecycle,
  options: { onCall?: ApiCallObserver; onDrift?: DriftObserver } = {},
): Promise<ApiClients & { emulatorUrl?: string }> {
  const common = {
    ...(options.onCall ? { onCall: options.onCall } : {}),
    // Answers that differ from the contract: each shape logged once by this process, all counted.
    onDrift: createDriftReporter({ logger, ...(options.onDrift ? { count: options.onDrift } : {}) }),
    timeouts: config.taxApi.timeouts,
    tokenRenewBeforeMs: config.taxApi.tokenRenewBeforeMs,
    allowInsecureHttp: config.allowInsecureHttp,
    vatModule: config.vatApi.module,
  };
  if (config.taxApi.url === undefined) {
    // Loaded only here: a process sending to a configured API never loads the emulator.
    const { startEmulator, DEFAULT_CLIENT } = await import('../emulator/index.js');
    // With its control API (loopback only, no auth), so `taxsync faults` can make calls fail on purpose.
    const emulator = await startEmulator({ port: 0, host: '127.0.0.1', control: true });
    lifecycle.onShutdown('emulator', () => emulator.close());
    logger.warn({ url: emulator.url }, `TAX_API_URL is not set: sending to the built-in emulator at ${emulator.url}`);
    const clients = createApiClients({
      ...common,
      taxUrl: emulator.url,
      clientId: DEFAULT_CLIENT.clientId,
      clientSecret: new Secret(DEFAULT_CLIENT.clientSecret),
    });
    lifecycle.onShutdown('api clients', () => clients.close());
    return { ...clients, emulatorUrl: emulator.url };
  }
  const clients = createApiClients({
    ...common,
    taxUrl: config.taxApi.url,
    ...(config.vatApi.url ? { vatUrl: config.vatApi.url } : {}),
    ...(config.taxApi.authUrl ? { authUrl: config.taxApi.authUrl } : {}),
    clientId: config.taxApi.clientId ?? '',
    clientSecret: config.taxApi.clientSecret ?? new Secret(''),
  });
  lifecycle.onShutdown('api clients', () => clients.close());
  return clients;
}
