import type { CanonicalEvent } from '../domain/events.js';
import { jsonEqual } from '../domain/merge-patch.js';
import { recordKeyString } from '../domain/record-key.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { withScripts } from '../queue/redis-scripts.js';
import { createRecordStore } from '../queue/record-state.js';
import { appendTraces, type TraceSettings } from '../queue/trace.js';

/**
 * Whether taxsync already holds each event of a backfilled delivery (docs/operations.md,
 * "Backfills"), judged by the record, not by an event id: a backfill has no real event id (Stripe's
 * is made up from the object's state, so it never matches the webhook's), so an event is held when
 * its record's newest event is of the same type with the same data. Such an event is not queued
 * again (the latest-state store would take a backfill of the same instant as a new version), and
 * the record's trace says that backfill found it held.
 */
export async function splitHeld(redis: RedisClient, keys: Keys, events: readonly CanonicalEvent[]): Promise<{ held: CanonicalEvent[]; fresh: CanonicalEvent[] }> {
  const records = createRecordStore(redis, keys);
  // The delivery's records (an order and its refunds) read at once, not one round trip after another.
  const newest = await Promise.all(events.map(async (event) => (await records.read(event.record)).event));
  const held: CanonicalEvent[] = [];
  const fresh: CanonicalEvent[] = [];
  events.forEach((event, i) => {
    const same = newest[i] !== undefined && newest[i].type === event.type && jsonEqual(plain(newest[i].data), plain(event.data));
    (same ? held : fresh).push(event);
  });
  return { held, fresh };
}

/** The data as JSON values (amounts as their strings), so two readings of one state compare equal. */
const plain = (data: unknown): unknown => JSON.parse(JSON.stringify(data)) as unknown;

/** A trace line on each held event's record: backfill found this version already held. */
export async function traceHeld(redis: RedisClient, keys: Keys, settings: TraceSettings, events: readonly CanonicalEvent[], at: Date): Promise<void> {
  const scripted = withScripts(redis);
  await Promise.all(
    events.map((event) =>
      appendTraces(
        scripted,
        keys,
        recordKeyString(event.record),
        [{ at: at.toISOString(), step: 'duplicate', event_id: event.id, occurred_at: event.occurred_at, connector: event.connector, detail: 'backfill found this version already held; not queued again' }],
        settings,
      ),
    ),
  );
}
