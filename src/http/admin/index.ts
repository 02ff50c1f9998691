import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '../../observability/logger.js';
import type { WaitingList } from '../../processors/waiting.js';
import type { RedisClient } from '../../queue/connection.js';
import type { Keys } from '../../queue/keys.js';
import type { DlqDeps } from '../../dead-letters/service.js';
import { createAdminAuth, type Viewer } from './auth.js';
import { registerBoard } from './board.js';
import { registerDeadLetterRoutes } from './dead-letters.js';
import { refuse, registerLogin, type LoginRate } from './login.js';
import type { Operator } from './operators.js';
import type { ReportsData } from '../../activity/reports-data.js';
import { createSessionStore } from './sessions.js';

/** The admin routes' dependencies; without them (no operator configured) /admin/* is a 404. */
export interface AdminDeps {
  /** Who may sign in and with which token (TAXSYNC_ADMIN_TOKENS, TAXSYNC_ADMIN_TOKEN as `admin`). */
  operators: readonly Operator[];
  /** Where sessions and the sign-in rate counters live: the installation's Redis, under its prefix. */
  sessions: { redis: RedisClient; keys: Pick<Keys, 'prefix'>; ttlMs?: number };
  /** Sign-in attempts per client address and window (default 10 per 15 minutes). */
  loginRate?: LoginRate;
  /** `Secure` on the session cookie (default true; false only for plain http on localhost). */
  secureCookie?: boolean;
  /** The queues Bull Board shows (read-only). */
  queues: readonly Queue[];
  /**
   * The dead-letter tools, writing the audit log as `actor`. Their `connections` (the daemon's, as
   * src/daemon/serve.ts gives them) place each entry in its connection; without them the page knows
   * only the connector an entry's event or delivery names.
   */
  dlq: (actor: string) => DlqDeps;
  /** The records waiting for what they need (oldest first), shown above the dead letters. */
  waiting?: () => Promise<WaitingList>;
  /** Source silence, activity plots and tax variances (src/activity/reports.ts), shown first. */
  reports?: () => Promise<ReportsData>;
  clock?: () => Date;
}

export const DEFAULT_SESSION_MS = 12 * 60 * 60 * 1000;
export const DEFAULT_LOGIN_RATE: LoginRate = { max: 10, windowMs: 15 * 60 * 1000 };

const FORM_LIMIT_BYTES = 1024 * 1024;

/** Our own pages: no scripts, no framing, no caching (Bull Board's pages need scripts and set their own). */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Bull Board and the dead-letter page under /admin, behind the operators' tokens (docs/operations.md, "Web view"). */
export async function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps, logger: Logger): Promise<void> {
  const ttlMs = deps.sessions.ttlMs ?? DEFAULT_SESSION_MS;
  const sessions = createSessionStore({ redis: deps.sessions.redis, keys: deps.sessions.keys, operators: deps.operators, ttlMs, ...(deps.clock ? { clock: deps.clock } : {}) });
  const auth = createAdminAuth(deps.operators, sessions, { secure: deps.secureCookie ?? true, maxAgeS: Math.floor(ttlMs / 1000) });
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
      await registerLogin(admin, { auth, logger, rate: deps.loginRate ?? DEFAULT_LOGIN_RATE, redis: deps.sessions.redis, prefix: deps.sessions.keys.prefix });
      await admin.register(async (guarded) => {
        guarded.addHook('onRequest', async (request, reply) => {
          const viewer = await auth.viewer(request);
          if (!viewer) return refuse(request, reply);
          viewers.set(request, viewer);
        });
        guarded.post('/logout', async (request, reply) => {
          const viewer = viewerOf(request);
          const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
          // A forged logout would only be a nuisance, but it is refused like any forged POST.
          if (!auth.sameSitePost(request, viewer, form.get('csrf') ?? undefined)) return reply.code(403).send({ error: 'forbidden', message: 'a sign-out must come from this site\'s own pages' });
          await auth.signOut(reply, viewer);
          logger.info({ operator: viewer.operator }, 'admin signed out');
          return reply.redirect('/admin/login', 303);
        });
        registerDeadLetterRoutes(guarded, { auth, dlq: deps.dlq, logger, viewerOf, ...(deps.waiting ? { waiting: deps.waiting } : {}), ...(deps.reports ? { reports: deps.reports } : {}) });
        await registerBoard(guarded, deps.queues);
      });
    },
    { prefix: '/admin' },
  );
}
