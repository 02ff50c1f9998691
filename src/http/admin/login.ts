import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../observability/logger.js';
import type { RedisClient } from '../../queue/connection.js';
import { fromOurPages, safeNext, type AdminAuth } from './auth.js';
import { html, page } from './html.js';

export function loginPage(next: string, failed = false): string {
  return page(
    'Sign in',
    html`${failed ? html`<p class="error">That token is not an operator's admin token.</p>` : ''}
<form method="post" action="/admin/login">
  <input type="hidden" name="next" value="${safeNext(next)}">
  <p><label>Your admin token (TAXSYNC_ADMIN_TOKENS, or TAXSYNC_ADMIN_TOKEN)<input type="password" name="token" autocomplete="current-password" required autofocus></label></p>
  <p><button>Sign in</button></p>
</form>`,
  );
}

/** 401: the sign-in form for a browser's page request, JSON for anything else. */
export function refuse(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  void reply.code(401).header('www-authenticate', 'Bearer realm="taxsync admin"').header('cache-control', 'no-store');
  if (request.method === 'GET' && (request.headers.accept ?? '').includes('text/html')) {
    return reply.type('text/html; charset=utf-8').send(loginPage(request.url));
  }
  return reply.send({ error: 'unauthorized', message: "the admin routes need an operator's token: Authorization: Bearer <token>" });
}

export interface LoginRate {
  /** Attempts allowed per client address in one window (TAXSYNC_ADMIN_LOGIN_MAX_ATTEMPTS). */
  max: number;
  windowMs: number;
}

/**
 * The public part of /admin: the sign-in form and its POST. The POST is rate limited per client
 * address with the counter in Redis (under the installation's prefix), so the limit holds across
 * every `taxsync serve` process.
 */
export async function registerLogin(
  scope: FastifyInstance,
  deps: { auth: AdminAuth; logger: Logger; rate: LoginRate; redis: RedisClient; prefix: string },
): Promise<void> {
  const { auth, logger } = deps;
  await scope.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${deps.prefix}:admin-login-rate:`,
    // Sign-ins must not fail open while Redis is away, but no session can be stored then anyway.
    skipOnError: false,
    errorResponseBuilder: (_request, context) => {
      logger.warn({ max: context.max }, 'admin sign-in refused: too many attempts from one address');
      return { statusCode: 429, error: 'too_many_requests', message: `too many sign-in attempts from this address; try again in ${context.after}` };
    },
  });
  scope.get('/login', (request, reply) => {
    const next = new URLSearchParams(request.url.split('?')[1] ?? '').get('next');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(loginPage(safeNext(next)));
  });
  scope.post('/login', { config: { rateLimit: { max: deps.rate.max, timeWindow: deps.rate.windowMs } } }, async (request, reply) => {
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const next = safeNext(form.get('next'));
    if (!fromOurPages(request)) return reply.code(403).type('text/html; charset=utf-8').send(page('Refused', html`<p>A sign-in must come from this site's own form.</p>`));
    const operator = auth.operatorFor(form.get('token') ?? '');
    if (!operator) {
      logger.warn({ ip: request.ip }, 'admin sign-in refused: wrong token');
      return reply.code(401).type('text/html; charset=utf-8').send(loginPage(next, true));
    }
    await auth.signIn(reply, operator);
    logger.info({ ip: request.ip, operator: operator.name }, 'admin signed in');
    return reply.redirect(next, 303);
  });
}
