import type { FastifyReply, FastifyRequest } from 'fastify';
import { operatorFor, sameBytes, type Operator } from './operators.js';
import type { Session, SessionStore } from './sessions.js';

/** The session cookie: a random id of a session kept in Redis (never the token, never a name). */
export const SESSION_COOKIE = 'taxsync_admin';
/** The cookie of earlier versions that held a name typed at sign-in; cleared at sign-in and sign-out. */
const OLD_NAME_COOKIE = 'taxsync_admin_name';

/**
 * Who is asking. The audit actor is derived from the operator the token belongs to, never from
 * anything the client types: `admin:web:<operator>` for a browser session,
 * `admin:bearer:<operator>` for a bearer token.
 */
export type Viewer = { via: 'bearer'; operator: string; actor: string } | { via: 'cookie'; operator: string; actor: string; session: Session };

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookiePolicy {
  /** False only with TAXSYNC_ADMIN_INSECURE_COOKIE=1 on a loopback listener (plain http on localhost). */
  secure: boolean;
  maxAgeS: number;
}

function cookie(name: string, value: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${value}; Path=/admin; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}; Max-Age=${maxAgeS}`;
}

export interface AdminAuth {
  /** Who the request is, or undefined when it carries no valid token or live session. */
  viewer(request: FastifyRequest): Promise<Viewer | undefined>;
  /** The operator `presented` is the token of (constant time over every operator). */
  operatorFor(presented: string): Operator | undefined;
  /** Opens a session in Redis and sets its cookie. */
  signIn(reply: FastifyReply, operator: Operator): Promise<void>;
  /** Ends the session in Redis (it no longer works anywhere) and clears the cookie. */
  signOut(reply: FastifyReply, viewer: Viewer): Promise<void>;
  /** The CSRF token of a cookie session: what every form of that session posts back. */
  csrfFor(viewer: Viewer): string | undefined;
  /** True when a cookie-authenticated POST came from our own pages. */
  sameSitePost(request: FastifyRequest, viewer: Viewer, csrf: string | undefined): boolean;
}

export function createAdminAuth(operators: readonly Operator[], sessions: SessionStore, policy: CookiePolicy): AdminAuth {
  return {
    async viewer(request) {
      const header = request.headers.authorization;
      // Only a bearer header is ours: a proxy's own `Authorization: Basic …` in front of /admin
      // must not hide the session cookie.
      if (header !== undefined && /^Bearer\b/i.test(header)) {
        const match = /^Bearer +(\S+)\s*$/i.exec(header);
        const operator = match ? operatorFor(operators, match[1]!) : undefined;
        return operator ? { via: 'bearer', operator: operator.name, actor: `admin:bearer:${operator.name}` } : undefined;
      }
      const id = readCookie(request, SESSION_COOKIE);
      if (id === undefined || id === '') return undefined;
      const session = await sessions.read(id);
      return session ? { via: 'cookie', operator: session.operator, actor: `admin:web:${session.operator}`, session } : undefined;
    },
    operatorFor: (presented) => operatorFor(operators, presented),
    async signIn(reply, operator) {
      const session = await sessions.create(operator);
      void reply.header('set-cookie', [cookie(SESSION_COOKIE, session.id, policy.maxAgeS, policy.secure), cookie(OLD_NAME_COOKIE, '', 0, policy.secure)]);
    },
    async signOut(reply, viewer) {
      if (viewer.via === 'cookie') await sessions.destroy(viewer.session.id);
      void reply.header('set-cookie', [cookie(SESSION_COOKIE, '', 0, policy.secure), cookie(OLD_NAME_COOKIE, '', 0, policy.secure)]);
    },
    csrfFor: (viewer) => (viewer.via === 'cookie' ? viewer.session.csrf : undefined),
    sameSitePost(request, viewer, csrf) {
      // A bearer token is never sent by a browser on its own: only cookie sessions can be forged.
      if (viewer.via === 'bearer') return true;
      return fromOurPages(request) && csrf !== undefined && sameBytes(csrf, viewer.session.csrf);
    },
  };
}

/** Fetch metadata (and Origin, when sent) must say the request came from this site's own pages. */
export function fromOurPages(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** Where to go after signing in: only a path of the admin pages (never another site). */
export function safeNext(next: string | null | undefined): string {
  return next && /^\/admin(\/[\w\-./?=&%+:@]*)?$/.test(next) && !next.includes('//') ? next : '/admin/dead-letters';
}
