import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../observability/logger.js';
import { fromOurPages, safeNext, type AdminAuth } from './auth.js';
import { html, page } from './html.js';

export function loginPage(next: string, failed = false): string {
  return page(
    'Sign in',
    html`${failed ? html`<p class="error">That token is not the admin token.</p>` : ''}
<form method="post" action="/admin/login">
  <input type="hidden" name="next" value="${safeNext(next)}">
  <p><label>Admin token (TAXSYNC_ADMIN_TOKEN)<input type="password" name="token" autocomplete="current-password" required autofocus></label></p>
  <p><label>Your name, for the audit log (optional)<input name="name" pattern="[\\w.@\\-]{1,64}" autocomplete="username"></label></p>
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
  return reply.send({ error: 'unauthorized', message: 'the admin routes need the admin token: Authorization: Bearer <TAXSYNC_ADMIN_TOKEN>' });
}

/** The public part of /admin: the sign-in form and its POST. */
export function registerLogin(scope: FastifyInstance, auth: AdminAuth, logger: Logger): void {
  scope.get('/login', (request, reply) => {
    const next = new URLSearchParams(request.url.split('?')[1] ?? '').get('next');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(loginPage(safeNext(next)));
  });
  scope.post('/login', (request, reply) => {
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const next = safeNext(form.get('next'));
    if (!fromOurPages(request)) return reply.code(403).type('text/html; charset=utf-8').send(page('Refused', html`<p>A sign-in must come from this site's own form.</p>`));
    if (!auth.isToken(form.get('token') ?? '')) {
      logger.warn({ ip: request.ip }, 'admin sign-in refused: wrong token');
      return reply.code(401).type('text/html; charset=utf-8').send(loginPage(next, true));
    }
    const name = form.get('name') ?? undefined;
    auth.signIn(reply, name === '' ? undefined : name);
    logger.info({ ip: request.ip }, 'admin signed in');
    return reply.redirect(next, 303);
  });
}
