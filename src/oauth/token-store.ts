import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { scriptOn } from '../queue/redis-scripts.js';
import { decryptTokens, encryptTokens } from './token-crypto.js';

/**
 * One connection's OAuth grant in Redis (docs/connectors-xero-quickbooks.md, "Tokens"): the token
 * set (encrypted), its generation (raised by every set stored), the refresh sent whose answer is
 * not stored yet (`pending`: which refresh token, when), and the grant's end when the platform
 * refused it (`revoked`). Every write checks the generation it read, so a set from a refresh that
 * lost the race to another never replaces a newer one.
 */

export const TokenSet = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  /** Epoch ms the access token stops working. */
  expires_at: z.number(),
  token_type: z.string().default('Bearer'),
  scope: z.string().optional(),
});
export type TokenSet = z.infer<typeof TokenSet>;

/** A refresh request sent with a refresh token (its hash, never the token) at a time, not answered yet. */
export interface PendingRefresh {
  spent: string;
  at: number;
}

export interface GrantState {
  tokens: TokenSet | undefined;
  gen: number;
  pending: PendingRefresh | undefined;
  revoked: { at: number; reason: string } | undefined;
}

export interface TokenStore {
  read(connection: string): Promise<GrantState>;
  /** Notes a refresh about to be sent with `refreshToken`, unless the generation moved on. */
  sending(connection: string, gen: number, refreshToken: string, at: number): Promise<boolean>;
  /** Stores the set a refresh answered; false when another set was stored since `gen` was read. */
  refreshed(connection: string, gen: number, tokens: TokenSet): Promise<boolean>;
  /** The platform refused the grant: the connection needs `taxsync connect`. */
  revoke(connection: string, gen: number, reason: string, at: number): Promise<boolean>;
  /** A new grant (`taxsync connect`): replaces whatever was there, revoked or not. */
  connected(connection: string, tokens: TokenSet): Promise<void>;
}

/** The hash a pending refresh is known by: the token itself never lands in Redis unencrypted. */
export const tokenHash = (refreshToken: string): string => createHash('sha256').update(refreshToken).digest('base64url').slice(0, 22);

// KEYS: the grant's hash. ARGV: 1 the generation read, then field/value pairs to set, then '--'
// and the fields to delete. Sets and deletes only while the generation is still the one read;
// `bump` (ARGV[2] = '1') raises it. Returns 1, or 0 when another write came first.
const WRITE_IF_GEN = `
if tonumber(redis.call('HGET', KEYS[1], 'gen') or '0') ~= tonumber(ARGV[1]) then return 0 end
local i = 3
while i <= #ARGV and ARGV[i] ~= '--' do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
for j = i + 1, #ARGV do redis.call('HDEL', KEYS[1], ARGV[j]) end
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'gen', 1) end
return 1
`;

const Pending = z.object({ spent: z.string(), at: z.number() });
const Revoked = z.object({ at: z.number(), reason: z.string() });

function parsed<T>(schema: z.ZodType<T>, text: string | null): T | undefined {
  if (text === null) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

export function createTokenStore(redis: RedisClient, keys: Pick<Keys, 'prefix'>, key: Buffer): TokenStore {
  const grantKey = (connection: string) => `${keys.prefix}:oauth:${connection}`;
  const writeIfGen = scriptOn(redis, 'taxsyncOauthWriteIfGen', 1, WRITE_IF_GEN);
  const write = async (connection: string, gen: number, bump: boolean, set: Record<string, string>, del: string[]): Promise<boolean> =>
    Number(await writeIfGen(grantKey(connection), gen, bump ? '1' : '0', ...Object.entries(set).flat(), '--', ...del)) === 1;
  return {
    async read(connection) {
      const [sealed = null, gen = null, pending = null, revoked = null] = await redis.hmget(grantKey(connection), 'set', 'gen', 'pending', 'revoked');
      const plain = sealed === null ? undefined : decryptTokens(key, connection, sealed);
      return {
        tokens: plain === undefined ? undefined : parsed(TokenSet, plain),
        gen: Number(gen ?? 0),
        pending: parsed(Pending, pending),
        revoked: parsed(Revoked, revoked),
      };
    },
    sending: (connection, gen, refreshToken, at) => write(connection, gen, false, { pending: JSON.stringify({ spent: tokenHash(refreshToken), at }) }, []),
    refreshed: (connection, gen, tokens) => write(connection, gen, true, { set: encryptTokens(key, connection, JSON.stringify(tokens)) }, ['pending', 'revoked']),
    revoke: (connection, gen, reason, at) => write(connection, gen, false, { revoked: JSON.stringify({ at, reason }) }, ['pending']),
    async connected(connection, tokens) {
      const multi = redis.multi();
      multi.hset(grantKey(connection), 'set', encryptTokens(key, connection, JSON.stringify(tokens)));
      multi.hdel(grantKey(connection), 'pending', 'revoked');
      multi.hincrby(grantKey(connection), 'gen', 1);
      await multi.exec();
    },
  };
}
