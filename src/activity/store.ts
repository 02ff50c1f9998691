import type { ChainableCommander } from 'ioredis';
import type { CanonicalEvent } from '../domain/events.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { Producer } from '../queue/producer.js';

/**
 * What the sources sent, for source silence (`status`, /metrics, the web view's warning) and the
 * web view's plot: the time of each source's last accepted event, and events per source per hour
 * (kept two days). Written in the same Redis transaction as the events themselves.
 */

export const HOUR_MS = 3_600_000;
/** Hourly buckets are kept this long. */
export const ACTIVITY_KEEP_MS = 48 * HOUR_MS;

export const activityKeys = (keys: Pick<Keys, 'prefix'>) => ({
  last: `${keys.prefix}:activity:last`,
  hour: (hourStartMs: number) => `${keys.prefix}:activity:events:${hourStartMs}`,
});

export const hourStart = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** Adds the activity of `events` to a MULTI. */
export function recordActivity(multi: ChainableCommander, keys: Pick<Keys, 'prefix'>, events: readonly CanonicalEvent[], nowMs: number): void {
  if (events.length === 0) return;
  const k = activityKeys(keys);
  const perSource = new Map<string, number>();
  for (const e of events) perSource.set(e.record.source, (perSource.get(e.record.source) ?? 0) + 1);
  const bucket = k.hour(hourStart(nowMs));
  // One HSET with every field, in object form: on a MULTI over BullMQ's client (where the producer's
  // ran before it had a connection of its own) the `key, field, value` form stored the field's
  // characters as fields (test/integration/activity); the object form is right on both.
  multi.hset(k.last, Object.fromEntries([...perSource.keys()].map((source) => [source, String(nowMs)])));
  for (const [source, n] of perSource) multi.hincrby(bucket, source, n);
  multi.pexpire(bucket, ACTIVITY_KEEP_MS + HOUR_MS);
}

/** The webhook server's producer: every accepted delivery also records its sources' activity. */
export function withActivity(producer: Producer, keys: Pick<Keys, 'prefix'>, clock: () => number = Date.now): Producer {
  return {
    ...producer,
    durability: producer.durability,
    isDuplicateDelivery: (connector, id) => producer.isDuplicateDelivery(connector, id),
    accept: (input) =>
      producer.accept({
        ...input,
        also: (multi) => {
          input.also?.(multi);
          recordActivity(multi, keys, input.events, clock());
        },
      }),
  };
}

/** source → epoch ms of its last accepted event. */
export function lastEvents(redis: RedisClient, keys: Pick<Keys, 'prefix'>): Promise<Record<string, string>> {
  return redis.hgetall(activityKeys(keys).last);
}

/** Events per source for each of the last `hours` hours (oldest first), the current hour included. */
export async function eventsPerHour(redis: RedisClient, keys: Pick<Keys, 'prefix'>, hours: number, nowMs: number): Promise<{ hour: number; counts: Record<string, number> }[]> {
  const k = activityKeys(keys);
  const last = hourStart(nowMs);
  const starts = Array.from({ length: hours }, (_, i) => last - (hours - 1 - i) * HOUR_MS);
  const multi = redis.multi();
  for (const start of starts) multi.hgetall(k.hour(start));
  const results = (await multi.exec()) ?? [];
  return starts.map((hour, i) => {
    const raw = (results[i]?.[1] ?? {}) as Record<string, string>;
    return { hour, counts: Object.fromEntries(Object.entries(raw).map(([s, n]) => [s, Number(n)])) };
  });
}
