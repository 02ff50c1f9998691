import type { RedisClient } from './connection.js';
import { withScripts, type TaxsyncCommands } from './redis-scripts.js';
import { z } from 'zod';
import type { Keys } from './keys.js';

/** What happened to a record, one line of `taxsync trace`. */
export const TRACE_STEPS = [
  'received',
  'stale',
  'duplicate',
  'coalesced',
  'sent',
  'answered',
  'unchanged',
  'retry',
  'waiting',
  'dead-lettered',
  'replayed',
] as const;

export const TraceEntry = z.object({
  at: z.string(),
  step: z.enum(TRACE_STEPS),
  event_id: z.string().optional(),
  occurred_at: z.string().optional(),
  connector: z.string().optional(),
  detail: z.string().optional(),
  status: z.number().optional(),
  code: z.string().optional(),
});
export type TraceEntry = z.infer<typeof TraceEntry>;

export interface TraceSettings {
  /** Entries kept per record (0 turns tracing off). */
  maxEntries: number;
  /** A record's trace expires this long after its last entry. */
  maxAgeMs: number;
}

export const DEFAULT_TRACE: TraceSettings = { maxEntries: 100, maxAgeMs: 30 * 24 * 3600 * 1000 };

export function traceLine(entry: TraceEntry): string {
  return JSON.stringify(entry);
}

type TraceChain = Pick<TaxsyncCommands, 'taxsyncTrace'> | { taxsyncTrace(...args: Parameters<TaxsyncCommands['taxsyncTrace']>): unknown };

/** Appends on a scripted client, pipeline or MULTI (bounded in size and age). */
export function appendTrace(chain: TraceChain, keys: Keys, recordKey: string, entry: TraceEntry, settings: TraceSettings): void {
  appendTraces(chain, keys, recordKey, [entry], settings);
}

/**
 * Appends several lines, oldest first, with one trim and one expiry, after the record's pending
 * 'received' line (written only now: see TRACE_LIB in src/queue/redis-scripts.ts).
 */
export function appendTraces(chain: TraceChain, keys: Keys, recordKey: string, entries: readonly TraceEntry[], settings: TraceSettings): unknown {
  if (settings.maxEntries <= 0 || entries.length === 0) return undefined;
  return chain.taxsyncTrace(
    keys.state(recordKey),
    keys.event(recordKey),
    keys.applied(recordKey),
    keys.trace(recordKey),
    settings.maxEntries,
    settings.maxAgeMs,
    ...entries.map(traceLine),
  );
}

/** Oldest first, the newest event's 'received' line included while it is still pending. */
export async function readTrace(redis: RedisClient, keys: Keys, recordKey: string): Promise<TraceEntry[]> {
  const lines = await withScripts(redis).taxsyncReadTrace(keys.state(recordKey), keys.event(recordKey), keys.applied(recordKey), keys.trace(recordKey));
  return lines
    .reverse()
    .flatMap((line) => {
      const parsed = TraceEntry.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    });
}
