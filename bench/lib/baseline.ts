import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import type { CanonicalEvent, InvoiceCustomer } from '../../src/domain/events.js';
import { parseRecordKeyString, type RecordKey } from '../../src/domain/record-key.js';
import { createRedis } from '../../src/queue/connection.js';
import { createCustomerWriters } from '../../src/queue/customer-writer.js';
import { createKeys } from '../../src/queue/keys.js';
import { QUEUE_NAMES } from '../../src/queue/names.js';
import { createRecordStore } from '../../src/queue/record-state.js';
import type { TraceSettings } from '../../src/queue/trace.js';

/** One prepared PUT to `path`; its status (a 2xx, else it throws). */
async function putTo(pool: Pool, path: string, body: string): Promise<number> {
  const res = await pool.request({ method: 'PUT', path, body, headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' } });
  await res.body.text();
  if (res.statusCode >= 300) throw new Error(`status ${res.statusCode}`);
  return res.statusCode;
}

/** One prepared PUT /v1/transactions/, as every bare worker sends it. */
const putTransaction = (pool: Pool, body: string): Promise<number> => putTo(pool, '/v1/transactions/', body);

/** What the floor worker does besides the scenario 2 floor's steps. */
export interface FloorOptions {
  /** The invoice's customer facts to send first (record, the facts offered, prepared body, its hash), when it has a customer. */
  customerOf?: (event: CanonicalEvent) => { key: RecordKey; offer: { customer: InvoiceCustomer; atMs: number }; body: string; hash: string } | undefined;
}

/** The bare minimum: one BullMQ queue whose jobs each hold a prepared PUT body. */
export async function startBaselineQueue(redisUrl: string, prefix: string, name: string) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue<{ body: string }>(name, { connection, prefix });
  await queue.waitUntilReady();
  return {
    queue,
    async addAll(bodies: readonly string[], batch = 500) {
      for (let i = 0; i < bodies.length; i += batch) {
        await queue.addBulk(bodies.slice(i, i + batch).map((body) => ({ name: 'put', data: { body }, opts: { removeOnComplete: true, removeOnFail: true } })));
      }
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

/** A minimal BullMQ worker: one PUT /v1/transactions/ per job with undici, nothing else. */
export async function startBaselineWorker(redisUrl: string, prefix: string, name: string, apiUrl: string, concurrency: number, options: { fromOrder?: boolean } = {}) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const pool = new Pool(apiUrl, { connections: concurrency });
  // A raw Shopify order (scenario 5): the least a worker must do is name the record it sends.
  const bodyOf = options.fromOrder
    ? (raw: string) => JSON.stringify({ source: 'shopify', external_id: String((JSON.parse(raw) as { id: number }).id) })
    : (raw: string) => raw;
  const worker = new Worker<{ body: string }>(
    name,
    async (job) => {
      await putTransaction(pool, bodyOf(job.data.body));
    },
    { connection, prefix, concurrency },
  );
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await pool.close();
      connection.disconnect();
    },
  };
}

/**
 * The floor of sync (scenario 2's floor row): the bare worker plus only what latest-state-wins
 * needs around each call, with taxsync's own record store and nothing else: the record's state and
 * newest event read (one Lua call, the event parsed and checked at that Redis boundary), the
 * version made the applied copy before the write goes out (in the read's Lua call, as taxsync's
 * job does for an upsert; in a call of its own when the read could not), the prepared PUT, the
 * version marked applied with its trace line under the job's lock (one Lua call), and the check
 * after the job completes (an event stored meanwhile must find a job). No mapping, no body check, no
 * answer check, no skip-unchanged hash, no metrics: the difference to taxsync is those.
 */
export async function startFloorWorker(
  redisUrl: string,
  prefix: string,
  apiUrl: string,
  concurrency: number,
  bodyOf: (externalId: string) => string,
  trace: TraceSettings,
  options: FloorOptions = {},
) {
  // The read does SENDING's work for the invoice upserts it holds (no coalescing window: the floor sends at once).
  const sendingAtRead = () => ({ types: ['invoice.upserted'], nowMs: Date.now(), windowMs: 0, latestMs: Date.now() });
  const connection = createRedis(redisUrl, 'worker');
  const state = createRedis(redisUrl, 'worker');
  const keys = createKeys(prefix);
  const records = createRecordStore(state, keys);
  const writers = createCustomerWriters(state, keys);
  const pool = new Pool(apiUrl, { connections: concurrency });
  const worker = new Worker(
    QUEUE_NAMES.transactions,
    async (job, token) => {
      const record = parseRecordKeyString(job.id ?? '');
      const held = await records.read(record, sendingAtRead());
      if (held.seq <= held.appliedSeq || !held.event) return;
      const eventJson = held.eventJson === undefined ? {} : { eventJson: held.eventJson };
      // The version becomes the record's applied copy (and its sent_hash is cleared) before the
      // write goes out: a worker stopped after the engine took it leaves no stale copy or hash.
      if (!held.sendingDone) await records.sending(record, held.seq, eventJson);
      const customer = options.customerOf?.(held.event);
      if (customer) {
        // The invoice's customer facts first (scenario 5's floor), as taxsync sends them: the
        // customer's writer lock taken with its state read, its hash cleared before a different
        // body goes out, the PUT, and the hash kept with the lock given back.
        const writer = await writers.take(customer.key, customer.offer);
        if (writer.state.sentHash === customer.hash) await writer.release();
        else {
          if (writer.state.sentHash !== undefined) await writer.sending();
          await putTo(pool, '/v1/customers/', customer.body);
          await writer.accepted(customer.hash);
        }
      }
      const status = await putTransaction(pool, bodyOf(record.external_id));
      const now = new Date();
      await records.markApplied(record, held.seq, held.event, now, {
        ...eventJson,
        trace: { entries: [{ at: now.toISOString(), step: 'answered', event_id: held.event.id, status, detail: 'floor' }], settings: trace },
        // Nothing is marked by a job that lost its lock (another worker took it over).
        ...(token === undefined ? {} : { fence: { lockKey: `${worker.toKey(job.id ?? '')}:lock`, token } }),
      });
    },
    { connection, prefix, concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
  );
  worker.on('completed', (job) => void records.hasUnapplied(parseRecordKeyString(job.id ?? '')));
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await pool.close();
      connection.disconnect();
      state.disconnect();
    },
  };
}
