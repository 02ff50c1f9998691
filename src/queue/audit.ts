import { userInfo } from 'node:os';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';
import { z } from 'zod';
import type { Keys } from './keys.js';

export const AUDIT_ACTIONS = ['replay', 'discard', 'export', 'edit', 'resend'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One operator action on the dead-letter queue, or a `taxsync resend` (append-only, newest first). */
export const AuditEntry = z.object({
  at: z.string(),
  actor: z.string(),
  action: z.enum(AUDIT_ACTIONS),
  /** The filter the entries were chosen by, when they were chosen by one. */
  filter: z.record(z.string(), z.string()).optional(),
  /** The entry ids named on the command line. */
  ids: z.array(z.string()).optional(),
  count: z.number().int().nonnegative(),
  /** One line: what came of it (e.g. `3 replayed, 1 superseded, 0 failed`). */
  outcome: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export type NewAuditEntry = Omit<AuditEntry, 'at' | 'actor'> & { at?: string; actor?: string };

/** Entries kept; the oldest beyond this are trimmed. */
export const AUDIT_MAX_ENTRIES = 10_000;

export interface AuditLog {
  /** Who this log writes as: the `actor` option, else the OS user. */
  readonly actor: string;
  /** Queues the append on `multi`, so it commits with the action it describes. */
  appendTo(multi: ChainableCommander, entry: NewAuditEntry): AuditEntry;
  append(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Newest first. */
  list(limit?: number): Promise<AuditEntry[]>;
}

/** The operator's name: `--actor`, else the OS user. */
export function defaultActor(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

export function createAuditLog(redis: RedisClient, keys: Keys, options: { actor?: string; clock?: () => Date } = {}): AuditLog {
  const clock = options.clock ?? (() => new Date());
  const actor = options.actor ?? defaultActor();
  function build(entry: NewAuditEntry): AuditEntry {
    return AuditEntry.parse({ ...entry, at: entry.at ?? clock().toISOString(), actor: entry.actor ?? actor });
  }
  function appendTo(multi: ChainableCommander, entry: NewAuditEntry): AuditEntry {
    const built = build(entry);
    multi.lpush(keys.audit, JSON.stringify(built));
    multi.ltrim(keys.audit, 0, AUDIT_MAX_ENTRIES - 1);
    return built;
  }
  return {
    actor,
    appendTo,
    async append(entry) {
      const multi = redis.multi();
      const built = appendTo(multi, entry);
      await multi.exec();
      return built;
    },
    async list(limit = 50) {
      const lines = await redis.lrange(keys.audit, 0, Math.max(0, limit - 1));
      return lines.flatMap((line) => {
        try {
          const parsed = AuditEntry.safeParse(JSON.parse(line));
          return parsed.success ? [parsed.data] : [];
        } catch {
          return [];
        }
      });
    },
  };
}
