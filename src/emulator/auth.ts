import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { EmulatorClock } from './clock.js';
import { signJwt, verifyJwt } from './jwt.js';

/** Permissions a token can carry. Registration routes check them (vat-compliance-api.md). */
export const REGISTRATION_PERMISSIONS = ['REGISTRATION_VIEW', 'REGISTRATION_CREATE', 'REGISTRATION_EDIT'] as const;
export type RegistrationPermission = (typeof REGISTRATION_PERMISSIONS)[number];

export interface EmulatorClient {
  clientId: string;
  clientSecret: string;
  /**
   * Carried in the token's `permissions` claim. `REGISTRATION_CREATE` holds for every entity,
   * `REGISTRATION_CREATE:<entity uuid>` for that entity only. Default: the three registration
   * permissions, unscoped.
   */
  permissions?: readonly string[];
}

export const DEFAULT_CLIENT: EmulatorClient = {
  clientId: 'taxsync-dev',
  clientSecret: 'taxsync-dev-secret',
  permissions: REGISTRATION_PERMISSIONS,
};

export const TOKEN_ISSUER = 'taxsync-emulator';

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  client_id: string;
  tenant_id: string;
  permissions: string[];
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  expire_at: string;
}

export type TokenCheck = { ok: true; claims: TokenClaims; token: string } | { ok: false; reason: string };

export interface Authority {
  /** undefined when the credentials are wrong. */
  issue(clientId: string, clientSecret: string): IssuedToken | undefined;
  /** Checks an Authorization header value. */
  check(authorization: string | undefined): TokenCheck;
  /** Forced expiry of every token issued so far; answers how many were live. */
  expireAll(): number;
  /** Forced expiry of one token (the `expire_token` fault). */
  expire(token: string): void;
  addClient(client: EmulatorClient): void;
  /** Forgets issued tokens and added clients. */
  reset(): void;
}

export interface AuthorityOptions {
  clients: readonly EmulatorClient[];
  tokenTtlSeconds: number;
  tenantId: string;
  clock: EmulatorClock;
  /** HS256 key; random per emulator instance unless given. */
  signingKey?: string;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function createAuthority(options: AuthorityOptions): Authority {
  const key = options.signingKey === undefined ? randomBytes(32) : Buffer.from(options.signingKey);
  const configured = new Map(options.clients.map((c) => [c.clientId, c]));
  let clients = new Map(configured);
  // jti → expiry in ms. Milliseconds rather than the JWT's whole seconds so short test TTLs are exact.
  let issued = new Map<string, { expMs: number; revoked: boolean }>();

  return {
    issue(clientId, clientSecret) {
      const client = clients.get(clientId);
      if (client === undefined || !sameSecret(client.clientSecret, clientSecret)) return undefined;
      const nowMs = options.clock.now();
      const expMs = nowMs + options.tokenTtlSeconds * 1000;
      const iat = Math.floor(nowMs / 1000);
      const jti = randomUUID();
      const claims: TokenClaims = {
        iss: TOKEN_ISSUER,
        sub: client.clientId,
        aud: 'taxsync',
        iat,
        nbf: iat,
        exp: Math.floor(expMs / 1000),
        jti,
        client_id: client.clientId,
        tenant_id: options.tenantId,
        permissions: [...(client.permissions ?? REGISTRATION_PERMISSIONS)],
      };
      issued.set(jti, { expMs, revoked: false });
      return {
        access_token: signJwt(claims as unknown as Record<string, unknown>, key),
        token_type: 'Bearer',
        expires_in: Math.floor(options.tokenTtlSeconds),
        expire_at: new Date(expMs).toISOString(),
      };
    },

    check(authorization) {
      if (authorization === undefined || authorization.trim() === '') {
        return { ok: false, reason: 'missing bearer token: send Authorization: Bearer <access_token>' };
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (match === null) return { ok: false, reason: 'Authorization must be "Bearer <access_token>"' };
      const token = match[1] as string;
      const verified = verifyJwt(token, key);
      if (!verified.ok) return verified;
      const claims = verified.claims as unknown as TokenClaims;
      const known = issued.get(claims.jti);
      if (known?.revoked === true) return { ok: false, reason: 'token expired (forced expiry)' };
      const expMs = known?.expMs ?? claims.exp * 1000;
      if (options.clock.now() >= expMs) return { ok: false, reason: `token expired at ${new Date(expMs).toISOString()}` };
      return { ok: true, claims, token };
    },

    expireAll() {
      let live = 0;
      const now = options.clock.now();
      for (const entry of issued.values()) {
        if (!entry.revoked && entry.expMs > now) live += 1;
        entry.revoked = true;
      }
      return live;
    },

    expire(token) {
      const verified = verifyJwt(token, key);
      if (!verified.ok) return;
      const entry = issued.get((verified.claims as unknown as TokenClaims).jti);
      if (entry) entry.revoked = true;
    },

    addClient(client) {
      clients.set(client.clientId, client);
    },

    reset() {
      clients = new Map(configured);
      issued = new Map();
    },
  };
}

/** Whether the claims hold `permission` for `entity` (unscoped, or scoped to that entity). */
export function hasPermission(claims: TokenClaims, permission: RegistrationPermission, entity?: string): boolean {
  return claims.permissions.some((p) => p === permission || (entity !== undefined && p === `${permission}:${entity}`));
}

/** Entities for which the claims hold a scoped `permission`. */
export function scopedEntities(claims: TokenClaims, permission: RegistrationPermission): Set<string> {
  const prefix = `${permission}:`;
  return new Set(claims.permissions.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)));
}
