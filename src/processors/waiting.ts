import { z } from 'zod';
import { RecordKey, parseRecordKeyString, recordKeyString } from '../domain/record-key.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { Missing } from './types.js';

/**
 * The records waiting for something they need (a refund for its original, an exemption for its
 * customer), so `taxsync status` and the web view list them at once, without a scan of every
 * record: a sorted set (record key by the time it started waiting) and a hash (what it waits
 * for), both under the installation prefix. The record processor adds a record when it waits and
 * removes it when the record is applied or dead-lettered.
 */
export interface WaitingIndex {
  /** Adds (or refreshes) a waiting record; the time it started waiting is kept from the first call. */
  start(record: RecordKey, sinceMs: number, reason: string, missing: Missing | undefined): Promise<void>;
  stop(record: RecordKey): Promise<void>;
  /** The oldest `limit` waiting records, and how many wait in all. */
  list(options?: { limit?: number; now?: number }): Promise<WaitingList>;
}

export interface WaitingRecord {
  record: RecordKey;
  /** What it waits for, when the handler said (`original`: a refund's invoice). */
  waiting_for: Missing | null;
  reason: string;
  /** ISO time it started waiting. */
  since: string;
  age_s: number;
}

export interface WaitingList {
  total: number;
  records: WaitingRecord[];
}

const Info = z.object({ reason: z.string(), missing: z.object({ record: RecordKey, what: z.enum(['original', 'customer', 'invoice']) }).nullable() });

/** The index's two keys: under the prefix, so one installation stays in one Redis Cluster slot. */
export const waitingKeys = (keys: Keys) => ({ since: `${keys.prefix}:waiting`, info: `${keys.prefix}:waiting-for` });

export function createWaitingIndex(redis: RedisClient, keys: Keys): WaitingIndex {
  const { since, info } = waitingKeys(keys);
  return {
    async start(record, sinceMs, reason, missing) {
      const member = recordKeyString(record);
      await redis
        .multi()
        .zadd(since, 'NX', sinceMs, member)
        .hset(info, member, JSON.stringify({ reason, missing: missing ?? null }))
        .exec();
    },
    async stop(record) {
      const member = recordKeyString(record);
      await redis.multi().zrem(since, member).hdel(info, member).exec();
    },
    async list(options = {}) {
      const limit = options.limit ?? 100;
      const now = options.now ?? Date.now();
      const [total, ranked] = await Promise.all([redis.zcard(since), redis.zrange(since, '0', String(Math.max(0, limit - 1)), 'WITHSCORES')]);
      const members: { member: string; score: number }[] = [];
      for (let i = 0; i + 1 < ranked.length; i += 2) members.push({ member: ranked[i]!, score: Number(ranked[i + 1]) });
      const infos = members.length === 0 ? [] : await redis.hmget(info, ...members.map((m) => m.member));
      const records = members.flatMap(({ member, score }, i): WaitingRecord[] => {
        let record: RecordKey;
        try {
          record = parseRecordKeyString(member);
        } catch {
          return [];
        }
        const parsed = readInfo(infos[i]);
        return [
          {
            record,
            waiting_for: parsed?.missing ?? null,
            reason: parsed?.reason ?? '',
            since: new Date(score).toISOString(),
            age_s: Math.max(0, Math.round((now - score) / 1000)),
          },
        ];
      });
      return { total, records };
    },
  };
}

function readInfo(text: string | null | undefined): z.infer<typeof Info> | undefined {
  if (!text) return undefined;
  try {
    const parsed = Info.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** "12 s", "14 min", "3.5 h", "2 d": ages and waits as operators read them. */
export function describeAge(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 360) / 10} h`;
  return `${Math.round(seconds / 8640) / 10} d`;
}
