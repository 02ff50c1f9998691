import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { Answer } from './answer.js';
import { registerAuthRoutes } from './auth-routes.js';
import { createAuthority, type TokenClaims } from './auth.js';
import { createClock } from './clock.js';
import { registerControlRoutes } from './control.js';
import type { Emulator } from './emulator.js';
import { createFaults, type FaultDecision } from './faults.js';
import { resolveOptions, type EmulatorOptions } from './options.js';
import { createRequestLog, type RequestLogEntry } from './request-log.js';
import type { EmuRequest, RouteContext, RouteSpec } from './routing.js';
import { createState } from './state.js';
import { registerCustomerRoutes } from './tax-engine/customers.js';
import { registerExemptionRoutes } from './tax-engine/exemptions.js';
import { registerTransactionRoutes } from './tax-engine/transactions.js';
import { registerFilingRoutes } from './vat/filings.js';
import { registerRegistrationRoutes } from './vat/registrations.js';
import { registerVatTransactionRoutes } from './vat/transactions.js';
import { createVariety } from './variety/dice.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The emulator's route, for the hooks. */
    emulatorRoute?: RouteSpec;
    /** A control API route: no auth, no faults, not logged. */
    emulatorControl?: boolean;
  }
}

interface RequestContext {
  entry?: RequestLogEntry;
  claims?: TokenClaims;
  decision?: FaultDecision;
}

/** Registrations and filings answer `{detail}`; the tax engine and VAT submission `{error, details}`. */
function errorBody(url: string, message: string): Record<string, unknown> {
  return url.startsWith('/registrations/') || url.startsWith('/api/filing/') ? { detail: message } : { error: message, details: {} };
}

function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Builds the emulator: every route of both documents plus the control API when enabled. Nothing listens yet. */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const settings = resolveOptions(options);
  const clock = createClock(settings.clock);
  const state = createState();
  const authority = createAuthority({
    clients: settings.clients,
    tokenTtlSeconds: settings.tokenTtlSeconds,
    tenantId: settings.tenantId,
    clock,
    signingKey: settings.signingKey,
  });
  const faults = createFaults(settings.faults, settings.seed);
  const requestLog = createRequestLog(settings.requestLogLimit);
  const variety = createVariety(settings.variety, settings.varietySeed);
  const contexts = new WeakMap<FastifyRequest, RequestContext>();

  const app = Fastify({
    ...(settings.logger === undefined ? { logger: false } : { loggerInstance: settings.logger }),
    // External ids can be long; the default (100) would answer 404 for them.
    routerOptions: { maxParamLength: 1024 },
    bodyLimit: 5 * 1024 * 1024,
  });

  // An empty body with a JSON content type (curl -H ... without -d) is "no body", not an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(Object.assign(new Error('the body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'emulator route failed');
    return reply.code(status).send(errorBody(request.url, status >= 500 ? 'internal emulator error' : `invalid request: ${error.message}`));
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(request.url, `no route ${request.method} ${request.url.split('?')[0]} (see docs/emulator.md for the routes)`)),
  );

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    if (config.emulatorControl === true) return;
    const spec = config.emulatorRoute;
    const context: RequestContext = { entry: requestLog.start(request.method, request.url.split('?')[0] ?? request.url, spec?.endpoint ?? null) };
    contexts.set(request, context);
    if (spec === undefined || spec.auth === false) return;
    const header = request.headers.authorization;
    if (faults.decideTokenExpiry(spec.endpoint)) {
      const token = /^Bearer\s+(\S+)/i.exec(header ?? '')?.[1];
      if (token !== undefined) authority.expire(token);
      context.entry?.faults.push('expire_token');
    }
    const check = authority.check(header);
    if (!check.ok) {
      const description = check.reason.replace(/"/g, "'");
      return reply
        .code(401)
        .header('www-authenticate', `Bearer error="invalid_token", error_description="${description}"`)
        .send(errorBody(request.url, `unauthorized: ${check.reason}`));
    }
    context.claims = check.claims;
    if (context.entry !== undefined) context.entry.client_id = check.claims.client_id;
  });

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const spec = request.routeOptions.config.emulatorRoute;
    const context = contexts.get(request);
    if (spec === undefined || context?.entry === undefined) return;
    context.entry.record = spec.record?.(emuRequest(request, context)) ?? null;
    const decision = faults.decide(spec.endpoint);
    context.decision = decision;
    context.entry.faults.push(...decision.fired);
    if (decision.latencyBeforeMs > 0) await sleep(decision.latencyBeforeMs);
    if (decision.reject?.kind === 'answer') {
      // Byte for byte what the rule says, no content-type of fastify's own: a proxy's page, a WAF's 200, an empty 500.
      const { status, headers, body } = decision.reject;
      reply.hijack();
      reply.raw.writeHead(status, { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) });
      reply.raw.end(body);
      requestLog.finish(context.entry, status, 'answered');
      return reply;
    }
    if (decision.reject !== undefined) {
      const { kind, status } = decision.reject;
      const message = kind === 'rate_limit' ? 'rate limited (emulator fault)' : status >= 500 ? 'injected server error (emulator fault)' : `injected ${status} (emulator fault)`;
      return reply.code(status).headers(decision.reject.headers).send(errorBody(request.url, message));
    }
  });

  app.addHook('onResponse', (request, reply, done) => {
    const entry = contexts.get(request)?.entry;
    if (entry !== undefined) requestLog.finish(entry, reply.statusCode, 'answered');
    done();
  });

  app.addHook('onRequestAbort', (request, done) => {
    const entry = contexts.get(request)?.entry;
    if (entry !== undefined) requestLog.finish(entry, null, 'aborted');
    done();
  });

  function emuRequest(request: FastifyRequest, context: RequestContext): EmuRequest {
    return {
      params: (request.params ?? {}) as Record<string, string>,
      query: (request.query ?? {}) as Record<string, unknown>,
      body: request.body,
      claims: context.claims,
      origin: originOf(request),
      headers: request.headers,
    };
  }

  const define = (spec: RouteSpec) => {
    app.route({
      method: spec.method,
      url: spec.path,
      config: { emulatorRoute: spec },
      handler: async (request, reply) => {
        const context = contexts.get(request) ?? {};
        const answer: Answer = await spec.handler(emuRequest(request, context));
        if (answer.record !== undefined && context.entry !== undefined) context.entry.record = answer.record;
        if (context.decision?.drop === true) {
          // The state change is applied; the client never learns it (the ambiguous case).
          reply.hijack();
          if (context.entry !== undefined) requestLog.finish(context.entry, answer.status, 'dropped');
          reply.raw.destroy(new Error('connection dropped by an emulator fault'));
          return reply;
        }
        if (context.decision !== undefined && context.decision.latencyAfterMs > 0) await sleep(context.decision.latencyAfterMs);
        reply.code(answer.status);
        if (answer.headers !== undefined) reply.headers(answer.headers);
        return answer.body === undefined ? reply.send() : reply.send(answer.body);
      },
    });
  };

  const ctx: RouteContext = { define, state, settings, clock, authority, variety };
  registerAuthRoutes(ctx);
  registerCustomerRoutes(ctx);
  registerExemptionRoutes(ctx);
  registerTransactionRoutes(ctx);
  registerVatTransactionRoutes(ctx);
  registerRegistrationRoutes(ctx);
  registerFilingRoutes(ctx);

  const emulator: Emulator = {
    app,
    settings,
    state,
    clock,
    authority,
    faults,
    requestLog,
    variety,
    reset() {
      state.clear();
      authority.reset();
      requestLog.clear();
      faults.clear();
      clock.reset();
      variety.reset();
    },
    async listen(listenOptions = {}) {
      await app.listen({ port: listenOptions.port ?? 0, host: listenOptions.host ?? '127.0.0.1' });
      const address = app.server.address();
      if (address === null || typeof address === 'string') throw new Error('emulator: unexpected listen address');
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${host}:${address.port}`;
    },
    close: () => app.close(),
  };
  if (settings.control) registerControlRoutes(app, emulator);
  return emulator;
}

/** createEmulator + listen: for tests and the CLI. */
export async function startEmulator(options: EmulatorOptions & { port?: number; host?: string } = {}): Promise<Emulator & { url: string }> {
  const { port, host, ...rest } = options;
  const emulator = createEmulator(rest);
  const url = await emulator.listen({ port, host });
  return Object.assign(emulator, { url });
}
