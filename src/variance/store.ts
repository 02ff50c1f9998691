import { z } from 'zod';
import { Money } from '../domain/money.js';
import { RecordKey, recordKeyString } from '../domain/record-key.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { AppliedWrites } from '../queue/record-state.js';
import type { Variance } from './compute.js';

/**
 * The variances recorded (a hash per installation: record key → the latest variance of that
 * record), read by `taxsync variance`, `status`, `trace`, the web view and /metrics. A record sent
 * again within the thresholds drops its entry: the list is what differs now.
 */
export const VarianceEntry = z.object({
  record: RecordKey,
  engine_id: z.string().optional(),
  at: z.string(),
  currency: z.string(),
  charged: z.string(),
  computed: z.string(),
  difference: z.string(),
  percent: z.string().nullable(),
});
export type VarianceEntry = z.infer<typeof VarianceEntry>;

const Basis = z.object({ engine_id: z.string(), computed: z.string() });

type Basis = z.infer<typeof Basis>;

export interface VarianceStore {
  /**
   * Queues on `multi` (the writes of the record processor's mark applied) the record's variance, or
   * its clearing (undefined). `sent` says the body was just sent: its engine tax becomes the
   * record's basis (null: the answer gave none, so no basis is known any more) and a variance
   * recorded is counted in `tax_variances`. An unchanged body (not sent, skip unchanged) keeps the
   * basis and counts nothing: its variance was counted when the body was sent.
   */
  setTo(multi: AppliedWrites, record: RecordKey, variance: (Variance & { engine_id?: string }) | undefined, now: Date, sent?: { basis: Basis | null }): void;
  /** Queues on `multi` the removal of the record's basis (a body sent whose engine tax is not known). */
  forgetBasis(multi: AppliedWrites, record: RecordKey): void;
  /** The engine's computed tax last kept for the record. */
  basis(record: RecordKey): Promise<{ engine_id: string; computed: string } | undefined>;
  get(record: RecordKey): Promise<VarianceEntry | undefined>;
  /** Largest differences first. */
  list(options?: { source?: string; limit?: number }): Promise<{ total: number; entries: VarianceEntry[] }>;
  count(): Promise<number>;
}

const varianceKey = (keys: Keys) => `${keys.prefix}:variances`;
const BASIS_FIELD = 'variance_basis';

function parse(raw: string | null | undefined): VarianceEntry | undefined {
  if (!raw) return undefined;
  try {
    const parsed = VarianceEntry.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function createVarianceStore(redis: RedisClient, keys: Keys): VarianceStore {
  const key = varianceKey(keys);
  // The engine's tax for the body last sent lives in the record's own state hash (beside its
  // sent_hash): it shares the record's lifetime instead of growing a hash of every invoice ever seen.
  const basisKey = (record: RecordKey) => keys.state(recordKeyString(record));
  function setTo(multi: AppliedWrites, record: RecordKey, variance: (Variance & { engine_id?: string }) | undefined, now: Date, sent?: { basis: Basis | null }): void {
    const field = recordKeyString(record);
    if (sent?.basis === null) multi.hdel(basisKey(record), BASIS_FIELD);
    else if (sent) multi.hset(basisKey(record), BASIS_FIELD, JSON.stringify(sent.basis));
    if (variance === undefined) multi.hdel(key, field);
    else {
      const entry: VarianceEntry = { record, at: now.toISOString(), ...variance };
      multi.hset(key, field, JSON.stringify(entry));
      if (sent) multi.hincrby(keys.counters, 'tax_variances', 1);
    }
  }
  return {
    setTo,
    forgetBasis: (multi, record) => void multi.hdel(basisKey(record), BASIS_FIELD),
    async basis(record) {
      const raw = await redis.hget(basisKey(record), BASIS_FIELD);
      if (raw === null) return undefined;
      try {
        const parsed = Basis.safeParse(JSON.parse(raw));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
    async get(record) {
      return parse(await redis.hget(key, recordKeyString(record)));
    },
    async list(options = {}) {
      const all = Object.values(await redis.hgetall(key))
        .map(parse)
        .filter((e): e is VarianceEntry => e !== undefined && (options.source === undefined || e.record.source === options.source));
      const size = (e: VarianceEntry) => new Money(e.difference).abs();
      all.sort((a, b) => size(b).comparedTo(size(a)) || a.record.external_id.localeCompare(b.record.external_id));
      return { total: all.length, entries: options.limit === undefined ? all : all.slice(0, options.limit) };
    },
    count: () => redis.hlen(key),
  };
}
