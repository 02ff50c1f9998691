import type { ChainableCommander } from 'ioredis';
import type { Connections } from '../config/connection-list.js';
import type { CanonicalEvent } from '../domain/events.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { Producer } from '../queue/producer.js';
import { successorOf, type RecordedActivity } from './silence.js';

/**
 * What the connections sent, for silence (`status`, /metrics, the web view's warning) and the web
 * view's plot: the time of each connection's last accepted event, and events per connection per
 * hour (kept two days). Written in the same Redis transaction as the events themselves.
 *
 * Keyed by connection (`event.connector`), under keys of their own: before connections the same
 * facts were keyed by source, and a source's name can also be a connection's id ('woocommerce' was
 * the one shop, and is now the idle default beside 'shop-de'), so one hash holding both could not
 * tell them apart. The old keys are no longer written; their fields are read as their successor's
 * (silence.ts, successorOf) until it has its own, so an upgrade neither loses a silence that had
 * begun nor leaves a field nobody refreshes SILENT forever. The hourly ones expire by themselves.
 */

export const HOUR_MS = 3_600_000;
/** Hourly buckets are kept this long. */
export const ACTIVITY_KEEP_MS = 48 * HOUR_MS;

export const activityKeys = (keys: Pick<Keys, 'prefix'>) => ({
  /** Hash: connection id → epoch ms of its last accepted event. */
  last: `${keys.prefix}:activity:connections:last`,
  /** Hash per hour: connection id → events accepted. */
  hour: (hourStartMs: number) => `${keys.prefix}:activity:connections:events:${hourStartMs}`,
  /** Written before connections, keyed by source: read only. */
  sourceLast: `${keys.prefix}:activity:last`,
  sourceHour: (hourStartMs: number) => `${keys.prefix}:activity:events:${hourStartMs}`,
});

export const hourStart = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** Adds the activity of `events` to a MULTI. */
export function recordActivity(multi: ChainableCommander, keys: Pick<Keys, 'prefix'>, events: readonly CanonicalEvent[], nowMs: number): void {
  if (events.length === 0) return;
  const k = activityKeys(keys);
  const perConnection = new Map<string, number>();
  for (const e of events) perConnection.set(e.connector, (perConnection.get(e.connector) ?? 0) + 1);
  const bucket = k.hour(hourStart(nowMs));
  // One HSET with every field, in object form: on a MULTI over BullMQ's client (where the producer's
  // ran before it had a connection of its own) the `key, field, value` form stored the field's
  // characters as fields (test/integration/activity); the object form is right on both.
  multi.hset(k.last, Object.fromEntries([...perConnection.keys()].map((id) => [id, String(nowMs)])));
  for (const [id, n] of perConnection) multi.hincrby(bucket, id, n);
  multi.pexpire(bucket, ACTIVITY_KEEP_MS + HOUR_MS);
}

/** The webhook server's producer: every accepted delivery also records its connections' activity. */
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

/** The last accepted event of each connection, and of each source as written before connections (silence.ts reads them). */
export async function lastEvents(redis: RedisClient, keys: Pick<Keys, 'prefix'>): Promise<RecordedActivity> {
  const k = activityKeys(keys);
  const [byConnection, bySource] = await Promise.all([redis.hgetall(k.last), redis.hgetall(k.sourceLast)]);
  return { byConnection, bySource };
}

/**
 * Events per connection for each of the last `hours` hours (oldest first), the current hour
 * included. An hour's counts written before connections (per source) are added to their
 * successor's, so the plot does not break at an upgrade (they expire within two days).
 */
export async function eventsPerHour(
  redis: RedisClient,
  keys: Pick<Keys, 'prefix'>,
  hours: number,
  nowMs: number,
  connections: Connections,
): Promise<{ hour: number; counts: Record<string, number> }[]> {
  const k = activityKeys(keys);
  const last = hourStart(nowMs);
  const starts = Array.from({ length: hours }, (_, i) => last - (hours - 1 - i) * HOUR_MS);
  const multi = redis.multi();
  for (const start of starts) multi.hgetall(k.hour(start)).hgetall(k.sourceHour(start));
  const results = (await multi.exec()) ?? [];
  return starts.map((hour, i) => {
    const counts: Record<string, number> = {};
    const add = (id: string, n: string) => {
      if (Number.isFinite(Number(n))) counts[id] = (counts[id] ?? 0) + Number(n);
    };
    for (const [id, n] of Object.entries((results[2 * i]?.[1] ?? {}) as Record<string, string>)) add(id, n);
    for (const [source, n] of Object.entries((results[2 * i + 1]?.[1] ?? {}) as Record<string, string>)) {
      const successor = successorOf(connections, source);
      if (successor !== undefined) add(successor.id, n);
    }
    return { hour, counts };
  });
}
