import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Secret } from '../domain/secret.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { registerAdminRoutes, type AdminDeps } from './admin/index.js';
import { METRICS_REFUSED, metricsAllowed } from './metrics-access.js';
import { registerWebhookRoutes, type WebhookDeps } from './webhooks.js';

export interface AppDeps extends WebhookDeps {
  logger: Logger;
  metrics: Metrics;
  /** Redis reachable? Used by /readyz. */
  ready: () => Promise<boolean>;
  /** What /healthz says about the API taxsync talks to. */
  health: {
    usesEmulator: boolean;
    /** The built-in emulator's URL, when this process runs it (`taxsync start` without TAX_API_URL). */
    emulatorUrl?: string;
  };
  /** Bull Board and the dead-letter page under /admin; absent (no operator configured): /admin/* answers 404. */
  admin?: AdminDeps;
  /** TAXSYNC_METRICS_TOKEN; unset: /metrics answers only direct clients on this host. */
  metricsToken?: Secret;
}

/** The `api` member of /healthz: which tax engine this daemon sends to. */
export type HealthApi = { kind: 'emulator'; url?: string } | { kind: 'configured' };

/** The HTTP side, built without listen() so tests use inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const loggerInstance: FastifyBaseLogger = deps.logger.child({ component: 'http' });
  const app = Fastify({
    loggerInstance,
    // Requests are not logged one by one: headers carry signatures, and outcomes are logged by the routes.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (measurable CPU at webhook rates): the routes log with their
    // own bindings (connector, record), never through request.log.
    childLoggerFactory: (logger) => logger,
    bodyLimit: deps.bodyLimitBytes,
    return503OnClosing: true,
    // A path no route can match (bad escapes, an over-long segment) is a 404 like any unknown
    // connector, not fastify's 400/414 (docs/connectors.md lists what the routes answer).
    frameworkErrors: (_error, request, reply) => {
      void (reply as FastifyReply).code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}` });
    },
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    // Outside the webhook routes the default body parsers still run: a body they refuse on a path
    // with no route is still a 404.
    if (request.is404 && status < 500 && status !== 413) {
      return reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
    }
    if (status >= 500) deps.logger.error({ err: error }, 'request failed');
    const code =
      status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : status === 429 ? 'too_many_requests' : status >= 500 ? 'internal' : 'bad_request';
    const message = status === 413 ? `body exceeds the limit of ${deps.bodyLimitBytes} bytes` : status >= 500 ? 'internal error' : error.message;
    return reply.code(status).send({ error: code, message });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );

  // `taxsync demo` reads `api` to refuse sending sample data anywhere but the built-in emulator.
  const api: HealthApi = deps.health.usesEmulator
    ? { kind: 'emulator', ...(deps.health.emulatorUrl === undefined ? {} : { url: deps.health.emulatorUrl }) }
    : { kind: 'configured' };
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok', api }));
  app.get('/readyz', async (_request, reply) => {
    const ok = await deps.ready().catch(() => false);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', redis: ok ? 'reachable' : 'unreachable' });
  });
  app.get('/metrics', async (request, reply) => {
    if (!metricsAllowed(deps.metricsToken, { headers: request.headers, remoteAddress: request.socket.remoteAddress })) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="taxsync metrics"').send(METRICS_REFUSED);
    }
    return reply.header('content-type', deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  await app.register((scope, _opts, done) => {
    registerWebhookRoutes(scope, deps);
    done();
  });
  if (deps.admin) await registerAdminRoutes(app, deps.admin, deps.logger.child({ component: 'admin' }));
  return app;
}
