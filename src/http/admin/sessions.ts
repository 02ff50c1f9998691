import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../../queue/connection.js';
import type { Keys } from '../../queue/keys.js';
import { sameBytes, tokenFingerprint, type Operator } from './operators.js';

/**
 * Browser sessions of the admin pages, kept in Redis under the installation's prefix (so every
 * `taxsync serve` process behind a load balancer knows them, and a logout ends them everywhere).
 * The cookie holds only a random id; Redis holds a hash of it (a reader of Redis cannot take over a
 * session), the operator's name, a hash of the token it was issued for and the CSRF token.
 */
export interface Session {
  /** The random id the cookie carries. */
  id: string;
  operator: string;
  csrf: string;
}

export interface SessionStore {
  create(operator: Operator): Promise<Session>;
  /** The live session with this id, or undefined (unknown, expired, logged out, or its token rotated). */
  read(id: string): Promise<Session | undefined>;
  destroy(id: string): Promise<void>;
}

const Stored = z.object({ operator: z.string(), fingerprint: z.string(), csrf: z.string(), created_at: z.string() });

/** The session key for an id: `<prefix>:admin-session:<sha256(id)>`. */
export function sessionKey(keys: Pick<Keys, 'prefix'>, id: string): string {
  return `${keys.prefix}:admin-session:${createHash('sha256').update(id).digest('base64url')}`;
}

export function createSessionStore(deps: {
  redis: RedisClient;
  keys: Pick<Keys, 'prefix'>;
  operators: readonly Operator[];
  ttlMs: number;
  clock?: () => Date;
}): SessionStore {
  const clock = deps.clock ?? (() => new Date());
  return {
    async create(operator) {
      const id = randomBytes(32).toString('base64url');
      const csrf = randomBytes(32).toString('base64url');
      const stored = { operator: operator.name, fingerprint: tokenFingerprint(operator), csrf, created_at: clock().toISOString() };
      await deps.redis.set(sessionKey(deps.keys, id), JSON.stringify(stored), 'PX', deps.ttlMs);
      return { id, operator: operator.name, csrf };
    },
    async read(id) {
      if (!/^[\w-]{20,100}$/.test(id)) return undefined;
      const text = await deps.redis.get(sessionKey(deps.keys, id));
      if (text === null) return undefined;
      let stored: z.infer<typeof Stored>;
      try {
        stored = Stored.parse(JSON.parse(text));
      } catch {
        return undefined;
      }
      // The operator must still exist with the token the session was issued for.
      const operator = deps.operators.find((o) => o.name === stored.operator);
      if (!operator || !sameBytes(tokenFingerprint(operator), stored.fingerprint)) return undefined;
      return { id, operator: operator.name, csrf: stored.csrf };
    },
    async destroy(id) {
      await deps.redis.del(sessionKey(deps.keys, id));
    },
  };
}
