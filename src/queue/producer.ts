import type { Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { AckGuard } from './ack-durability.js';
import type { RedisClient } from './connection.js';
import { TaxsyncError } from '../domain/errors.js';
import { eventOrder, type CanonicalEvent } from '../domain/events.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { DeadLetterStore, NewDeadLetter, DeadLetterEntry } from './dead-letter.js';
import { enqueueRecordIn } from './enqueue.js';
import type { Keys } from './keys.js';
import { QUEUE_NAMES, queueForKind, type QueueName } from './names.js';
import { createLeanConnection } from './lean-connection.js';
import type { RetryPolicies, RetryPolicy } from './retry.js';
import type { TraceSettings } from './trace.js';
import { execOrThrow } from './redis-scripts.js';

export type EventOutcome = 'queued' | 'stale' | 'duplicate';

export interface AcceptInput {
  events: readonly CanonicalEvent[];
  /** Payloads that could not be read, written in the same step (nothing signed is lost). */
  deadLetters?: readonly NewDeadLetter[];
  /** Marks the delivery as accepted, in the same step, for dedupe of later retries. */
  delivery?: { connector: string; id: string };
  /** A progress marker written in the same step (`taxsync ingest` resumes from it). */
  checkpoint?: { key: string; value: string; ttlMs: number };
  /** Dead-letter entries these events replace (`taxsync dlq replay`), removed in the same step. */
  removeDeadLetters?: readonly string[];
  /** Extra writes for the same step (an audit line). */
  also?: (multi: ChainableCommander) => void;
}

export interface AcceptResult {
  outcomes: EventOutcome[];
  deadLetters: DeadLetterEntry[];
}

export interface Producer {
  /**
   * Writes every event to the latest-state store and makes sure its record has a job, with the
   * dead letters and the delivery marker, in ONE Redis transaction (MULTI): when it resolves, all
   * of it is stored, and confirmed as durable as `ack` asks (AOF fsync, a replica); a connection
   * lost before EXEC stores none of it. A write Redis took but could not confirm rejects with
   * REDIS_NOT_DURABLE (the caller answers 503; a retry of it is a duplicate).
   */
  accept(input: AcceptInput): Promise<AcceptResult>;
  /** How acceptances are confirmed (TAXSYNC_ACK_DURABILITY); absent: EXEC only. */
  readonly durability?: AckGuard;
  /** True when this delivery was accepted before. */
  isDuplicateDelivery(connector: string, deliveryId: string): Promise<boolean>;
}

export interface ProducerOptions {
  /** BullMQ queues sharing ONE ioredis connection (the transaction spans them). */
  queues: Readonly<Record<QueueName, Queue>>;
  connection: RedisClient;
  keys: Keys;
  deadLetters: DeadLetterStore;
  trace: TraceSettings;
  /** How long a delivery id is remembered (platforms retry for up to 3 days). */
  deliveryTtlMs: number;
  /** Delay before a record's job runs, letting a burst settle into one call. */
  coalesceDelayMs: number;
  retry?: RetryPolicy | RetryPolicies;
  /** What an acceptance waits for after EXEC (src/queue/ack-durability.ts); absent: nothing. */
  ack?: AckGuard;
  /** VAT submissions are on: transaction events are also queued for the vat-submissions queue. */
  vat?: boolean;
  clock?: () => Date;
}


export function createProducer(options: ProducerOptions): Producer {
  const redis = options.connection;
  const lean = createLeanConnection(options.connection);
  const clock = options.clock ?? (() => new Date());
  const { keys } = options;

  // Webhooks must answer 503 at once while Redis is away, never hang or answer 202 unstored.
  function ensureReady(): void {
    if (options.connection.status !== 'ready') {
      throw new TaxsyncError('REDIS_UNAVAILABLE', `Redis is not reachable (connection ${options.connection.status})`);
    }
  }

  return {
    ...(options.ack ? { durability: options.ack } : {}),
    async isDuplicateDelivery(connector, deliveryId) {
      ensureReady();
      return (await redis.exists(keys.delivery(connector, deliveryId))) === 1;
    },

    async accept(input) {
      ensureReady();
      const now = clock();
      // The transaction runs on a connection with only the scripts it needs (src/queue/lean-connection.ts).
      const bullClient = (await options.queues[QUEUE_NAMES.deadLetter].backend.client) as unknown as RedisClient;
      const client = await lean.get(bullClient);
      const multi = lean.multi(client);
      // Index in the transaction's results of each event's latest-state write (its outcome).
      const outcomeAt: number[] = [];
      let commands = 0;
      const record = (event: CanonicalEvent, json: string, key: RecordKey): void => {
        const recordKey = recordKeyString(key);
        // The trace lines (stale, received) are built by the script from the event itself.
        multi.taxsyncRecordEvent(
          keys.state(recordKey),
          keys.dirty,
          keys.trace(recordKey),
          keys.counters,
          keys.event(recordKey),
          keys.applied(recordKey),
          json,
          Date.parse(event.occurred_at),
          event.id,
          recordKey,
          now.getTime(),
          options.trace.maxEntries,
          options.trace.maxAgeMs,
          eventOrder(event),
        );
        const queue = options.queues[queueForKind(key.kind)];
        // BullMQ ignores an add whose job id exists: a waiting job will read the newest state.
        enqueueRecordIn(multi, queue, key, { delayMs: options.coalesceDelayMs, retry: options.retry });
        commands += 2;
      };
      for (const event of input.events) {
        outcomeAt.push(commands);
        const json = JSON.stringify(event);
        record(event, json, event.record);
        // With VAT on, invoices and refunds are also records of the vat-submissions queue: same
        // events, their own latest state and job, so the VAT path never waits for the tax engine.
        if (options.vat && event.record.kind === 'transaction') record(event, json, { ...event.record, kind: 'vat' });
      }
      const deadLetters = (input.deadLetters ?? []).map((entry) => options.deadLetters.addTo(multi, entry));
      if (input.delivery) {
        multi.set(keys.delivery(input.delivery.connector, input.delivery.id), now.toISOString(), 'PX', options.deliveryTtlMs);
      }
      for (const id of input.removeDeadLetters ?? []) options.deadLetters.removeTo(multi, id);
      input.also?.(multi);
      if (input.checkpoint) multi.set(input.checkpoint.key, input.checkpoint.value, 'PX', input.checkpoint.ttlMs);
      const drops = lean.drops();
      const results = await execOrThrow(multi);
      // Stored in Redis's memory; a 2xx waits until it is as durable as configured.
      await options.ack?.confirm(client);
      if (options.ack && lean.drops() !== drops) {
        throw new TaxsyncError('REDIS_NOT_DURABLE', 'the connection to Redis dropped while the write was being confirmed: it may not be stored durably');
      }
      const outcomes = input.events.map((_, i): EventOutcome => {
        const seq = Number(results[outcomeAt[i]!]?.[1]);
        return seq > 0 ? 'queued' : seq === 0 ? 'duplicate' : 'stale';
      });
      return { outcomes, deadLetters };
    },
  };
}
