import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Secret } from '../../config/secret.js';

/** The session cookie: an expiry and its HMAC under the admin token (the token itself never leaves the server). */
export const SESSION_COOKIE = 'taxsync_admin';
/** The name given at sign-in, for the audit log. */
export const NAME_COOKIE = 'taxsync_admin_name';
/** How long a browser session lasts. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

const NAME = /^[\w.@-]{1,64}$/;

export type Viewer = { via: 'bearer'; actor: string } | { via: 'cookie'; actor: string; session: string };

function sameBytes(a: string, b: string): boolean {
  // Hashing first gives equal lengths, so the comparison takes the same time whatever is presented.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function cookie(name: string, value: string, maxAgeS: number): string {
  return `${name}=${value}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}`;
}

/** `admin:web`, or `admin:web:<name>` when a valid name was given (sign-in form or `X-Taxsync-Actor`). */
export function actorFor(name: string | undefined): string {
  return name !== undefined && NAME.test(name) ? `admin:web:${name}` : 'admin:web';
}

export interface AdminAuth {
  /** Who the request is, or undefined when it carries no valid token or session. */
  viewer(request: FastifyRequest): Viewer | undefined;
  /** True when `presented` is the admin token (constant time). */
  isToken(presented: string): boolean;
  /** Sets the session (and name) cookies after a successful sign-in. */
  signIn(reply: FastifyReply, name: string | undefined): void;
  signOut(reply: FastifyReply): void;
  /** The CSRF token of a session: what every form of that session posts back. */
  csrfFor(session: string): string;
  /** True when a cookie-authenticated POST came from our own pages. */
  sameSitePost(request: FastifyRequest, viewer: Viewer, csrf: string | undefined): boolean;
}

export function createAdminAuth(token: Secret, clock: () => Date = () => new Date()): AdminAuth {
  const mac = (text: string) => createHmac('sha256', token.reveal()).update(text).digest('base64url');
  const newSession = () => {
    const expires = String(clock().getTime() + SESSION_MS);
    return `${expires}.${mac(`session:${expires}`)}`;
  };
  const validSession = (value: string) => {
    const [expires, signature] = value.split('.');
    if (expires === undefined || signature === undefined || !/^\d{1,15}$/.test(expires)) return false;
    return sameBytes(signature, mac(`session:${expires}`)) && Number(expires) > clock().getTime();
  };
  const csrfFor = (session: string) => mac(`csrf:${session}`);
  return {
    viewer(request) {
      const header = request.headers.authorization;
      // Only a bearer header is ours: a proxy's own `Authorization: Basic …` in front of /admin
      // must not hide the session cookie.
      if (header !== undefined && /^Bearer\b/i.test(header)) {
        const match = /^Bearer +(\S+)\s*$/i.exec(header);
        const name = request.headers['x-taxsync-actor'];
        return match && sameBytes(match[1]!, token.reveal()) ? { via: 'bearer', actor: actorFor(typeof name === 'string' ? name : undefined) } : undefined;
      }
      const session = readCookie(request, SESSION_COOKIE);
      if (session === undefined || !validSession(session)) return undefined;
      return { via: 'cookie', actor: actorFor(readCookie(request, NAME_COOKIE)), session };
    },
    isToken: (presented) => sameBytes(presented, token.reveal()),
    signIn(reply, name) {
      const cookies = [cookie(SESSION_COOKIE, newSession(), SESSION_MS / 1000)];
      cookies.push(name !== undefined && NAME.test(name) ? cookie(NAME_COOKIE, name, SESSION_MS / 1000) : cookie(NAME_COOKIE, '', 0));
      void reply.header('set-cookie', cookies);
    },
    signOut(reply) {
      void reply.header('set-cookie', [cookie(SESSION_COOKIE, '', 0), cookie(NAME_COOKIE, '', 0)]);
    },
    csrfFor,
    sameSitePost(request, viewer, csrf) {
      // A bearer token is never sent by a browser on its own: only cookie sessions can be forged.
      if (viewer.via === 'bearer') return true;
      return fromOurPages(request) && csrf !== undefined && sameBytes(csrf, csrfFor(viewer.session));
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
