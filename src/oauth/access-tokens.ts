import { TaxsyncError } from '../domain/errors.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { acquireLease, setNx } from '../queue/lease.js';
import type { GrantState, TokenSet, TokenStore } from './token-store.js';

/**
 * Access tokens of the connections whose platform rotates its refresh tokens (Xero, QuickBooks
 * Online; docs/decisions.md, "Rotating refresh tokens"). A refresh token may be spent once: two
 * processes refreshing at once would spend it twice and one of them would lose the grant. So a
 * refresh runs under the connection's lock, after the refresh token about to be spent is noted
 * (`pending`), and the set it answers is stored before the lock is given back. An answer that never
 * comes (a timeout, a crash) leaves the note: the next refresh spends the same token again, which
 * the platforms accept within their grace period (Xero 30 minutes, Intuit 24 hours) — the only time
 * a token is spent twice. A refusal (`invalid_grant`) ends the grant: every fetch of the connection
 * waits for `taxsync connect` instead of failing one by one.
 */

/** The platform refused the refresh token: the grant is gone (OAuth `invalid_grant`). */
export class GrantRefused extends Error {
  override readonly name = 'GrantRefused';
}

/** One refresh-token grant request; throws GrantRefused for `invalid_grant`, anything else when no answer is known. */
export type RefreshRequest = (refreshToken: string) => Promise<TokenSet>;

export interface AccessTokens {
  /** A valid access token of the connection, refreshed first when it expires within the margin. */
  get(connection: string): Promise<string>;
  /** The platform refused `accessToken` (401): the next get() refreshes, unless another process did. */
  refused(accessToken: string): void;
}

export interface AccessTokenDeps {
  redis: RedisClient;
  keys: Pick<Keys, 'prefix'>;
  store: TokenStore;
  /** The refresh request of the connection's platform (its token endpoint and client credentials). */
  refresh(connection: string): RefreshRequest;
  clock?: () => number;
  /** An access token expiring within this is refreshed first. @defaultValue 120000 */
  marginMs?: number;
  /** The refresh lock's time to live (renewed while held). @defaultValue 30000 */
  lockTtlMs?: number;
  /** How long a caller waits for another process's refresh. @defaultValue 10000 */
  waitMs?: number;
}

function revoked(connection: string, state: GrantState): TaxsyncError {
  const why = state.revoked ? `the platform refused its grant (${state.revoked.reason}) at ${new Date(state.revoked.at).toISOString()}` : 'it was never connected';
  return new TaxsyncError('OAUTH_GRANT_REVOKED', `connection ${connection}: ${why}; reconnect it with \`taxsync connect ${connection}\``);
}

export function createAccessTokens(deps: AccessTokenDeps): AccessTokens {
  const clock = deps.clock ?? Date.now;
  const marginMs = deps.marginMs ?? 120_000;
  const lockTtlMs = deps.lockTtlMs ?? 30_000;
  // Access tokens known refused by the API: refreshed although they have not expired yet.
  const refusedTokens = new Set<string>();

  const usable = (state: GrantState): TokenSet | undefined =>
    state.tokens !== undefined && state.tokens.expires_at - marginMs > clock() && !refusedTokens.has(state.tokens.access_token) ? state.tokens : undefined;

  /** Under the lock; `tries` bounds the rounds where another writer moved the generation on. */
  async function refreshLocked(connection: string, tries = 3): Promise<string> {
    if (tries <= 0) throw new TaxsyncError('RECORD_BUSY', `connection ${connection}: its token changed under the refresh again and again`);
    const state = await deps.store.read(connection);
    if (state.revoked !== undefined || state.tokens === undefined) throw revoked(connection, state);
    const fresh = usable(state);
    if (fresh) return fresh.access_token;
    const spent = state.tokens.refresh_token;
    if (!(await deps.store.sending(connection, state.gen, spent, clock()))) return refreshLocked(connection, tries - 1);
    let answer: TokenSet;
    try {
      answer = await deps.refresh(connection)(spent);
    } catch (error) {
      if (!(error instanceof GrantRefused)) {
        // No answer known: the note stays, and the next refresh spends the same token again (the grace period).
        throw new TaxsyncError('OAUTH_REFRESH_FAILED', `connection ${connection}: the token refresh got no answer: ${(error as Error).message}`, { cause: error });
      }
      // Refused: unless another process stored a newer set meanwhile (then this token was simply superseded).
      if (await deps.store.revoke(connection, state.gen, error.message, clock())) throw revoked(connection, await deps.store.read(connection));
      return refreshLocked(connection, tries - 1);
    }
    if (!(await deps.store.refreshed(connection, state.gen, answer))) return refreshLocked(connection, tries - 1);
    return answer.access_token;
  }

  return {
    async get(connection) {
      const state = await deps.store.read(connection);
      if (state.revoked !== undefined || state.tokens === undefined) throw revoked(connection, state);
      const fresh = usable(state);
      if (fresh) return fresh.access_token;
      const lockKey = `${deps.keys.prefix}:oauth:${connection}:lock`;
      const held = await acquireLease(deps.redis, lockKey, { ttlMs: lockTtlMs, waitMs: deps.waitMs ?? 10_000 }, setNx(deps.redis, lockKey, lockTtlMs));
      if (held === undefined) throw new TaxsyncError('RECORD_BUSY', `connection ${connection}: another process is refreshing its token`);
      try {
        return await refreshLocked(connection);
      } finally {
        await held.lease.release();
      }
    },
    refused(accessToken) {
      if (refusedTokens.size >= 1_000) refusedTokens.clear();
      refusedTokens.add(accessToken);
    },
  };
}
