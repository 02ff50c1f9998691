import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Secret } from '../../config/secret.js';
import type { Logger } from '../../observability/logger.js';
import type { WaitingList } from '../../processors/waiting.js';
import type { DlqDeps } from '../../runtime/dlq.js';
import { createAdminAuth, type Viewer } from './auth.js';
import { registerBoard } from './board.js';
import { registerDeadLetterRoutes } from './dead-letters.js';
import { refuse, registerLogin } from './login.js';

/** The admin routes' dependencies; without them (TAXSYNC_ADMIN_TOKEN unset) /admin/* is a 404. */
export interface AdminDeps {
  /** TAXSYNC_ADMIN_TOKEN: the bearer token, and what a browser signs in with. */
  token: Secret;
  /** The queues Bull Board shows (read-only). */
  queues: readonly Queue[];
  /** The dead-letter tools, writing the audit log as `actor`. */
  dlq: (actor: string) => DlqDeps;
  /** The records waiting for what they need (oldest first), shown above the dead letters. */
  waiting?: () => Promise<WaitingList>;
  clock?: () => Date;
}

const FORM_LIMIT_BYTES = 1024 * 1024;

/** Our own pages: no scripts, no framing, no caching (Bull Board's pages need scripts and set their own). */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Bull Board and the dead-letter page under /admin, behind the admin token (docs/operations.md, "Web view"). */
export async function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps, logger: Logger): Promise<void> {
  const auth = createAdminAuth(deps.token, deps.clock);
  const viewers = new WeakMap<FastifyRequest, Viewer>();
  const viewerOf = (request: FastifyRequest): Viewer => {
    const viewer = viewers.get(request);
    if (!viewer) throw new Error('admin route reached without a viewer');
    return viewer;
  };
  await app.register(
    async (admin) => {
      admin.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) => {
        done(null, new URLSearchParams(body as string));
      });
      admin.addHook('onSend', async (request, reply) => {
        if (!request.url.startsWith('/admin/queues')) void reply.headers(PAGE_HEADERS);
      });
      registerLogin(admin, auth, logger);
      await admin.register(async (guarded) => {
        guarded.addHook('onRequest', async (request, reply) => {
          const viewer = auth.viewer(request);
          if (!viewer) return refuse(request, reply);
          viewers.set(request, viewer);
        });
        guarded.post('/logout', (request, reply) => {
          auth.signOut(reply);
          return reply.redirect('/admin/login', 303);
        });
        registerDeadLetterRoutes(guarded, { auth, dlq: deps.dlq, logger, viewerOf, ...(deps.waiting ? { waiting: deps.waiting } : {}) });
        await registerBoard(guarded, deps.queues);
      });
    },
    { prefix: '/admin' },
  );
}
