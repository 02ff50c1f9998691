import { randomUUID } from 'node:crypto';
import { Job, type Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { z } from 'zod';
import { RecordKey } from '../domain/record-key.js';
import { execOrThrow } from './redis-scripts.js';

export const DEAD_LETTER_VERSION = 1;

const Exchange = z.object({
  request: z.object({ method: z.string(), url: z.string(), body: z.string().optional() }),
  response: z
    .object({ status: z.number(), body: z.string().optional(), headers: z.record(z.string(), z.string()).optional() })
    .optional(),
});

/**
 * One final failure, with what an operator needs to act (DESIGN.md invariant 6). Written by
 * ingest for signed payloads it cannot understand (`raw` holds the delivery) and by workers for
 * final failures (`record` and `event`). Secrets never appear: signatures are not kept and HTTP
 * exchanges are recorded without authorization headers.
 */
export const DeadLetterEntry = z.object({
  id: z.string(),
  v: z.literal(DEAD_LETTER_VERSION),
  /** The queue the work came from, or `ingest` for deliveries that never became a job. */
  queue: z.string(),
  record: RecordKey.nullable(),
  /** The canonical event in wire form, when there is one. */
  event: z.unknown().nullable(),
  error: z.object({
    code: z.string(),
    message: z.string(),
    retryable: z.boolean(),
    fields: z.record(z.string(), z.array(z.string())).optional(),
  }),
  http: Exchange.nullable(),
  /** The delivery as received, for payloads that could not be read (body truncated). */
  raw: z
    .object({
      connector: z.string(),
      topic: z.string().optional(),
      delivery_id: z.string().optional(),
      content_type: z.string().optional(),
      received_at: z.string(),
      body: z.string(),
      body_truncated: z.boolean(),
    })
    .optional(),
  attempts: z.number().int().nonnegative(),
  /** `dlq edit`: the event as dead-lettered, kept the first time the entry is edited. */
  event_original: z.unknown().optional(),
  /** `dlq edit` of a kept delivery: the body as received, kept the first time it is edited. */
  raw_body_original: z.string().optional(),
  /** `dlq edit`: the last edit (who, when) and how many there were. */
  edited: z.object({ at: z.string(), actor: z.string(), count: z.number().int().positive() }).optional(),
  first_failed_at: z.string(),
  last_failed_at: z.string(),
});
export type DeadLetterEntry = z.infer<typeof DeadLetterEntry>;

export type NewDeadLetter = Omit<DeadLetterEntry, 'id' | 'v'> & { id?: string };

export interface DeadLetterStore {
  /** Queues the entry's write on `multi` (so it commits with whatever else the caller writes). */
  addTo(multi: ChainableCommander, entry: NewDeadLetter): DeadLetterEntry;
  add(entry: NewDeadLetter): Promise<DeadLetterEntry>;
  get(id: string): Promise<DeadLetterEntry | undefined>;
  /** Newest first. */
  list(options?: { offset?: number; limit?: number }): Promise<DeadLetterEntry[]>;
  count(): Promise<number>;
  /**
   * Queues the entry's removal on `multi` (so it leaves the queue in the same step as whatever
   * replaced it). An entry is a plain waiting job with no children: it is taken off the wait (or
   * paused) list and its hash and logs are deleted. Removing an absent entry does nothing.
   */
  removeTo(multi: ChainableCommander, id: string): void;
  /** Removes the entries in one transaction (absent ones are ignored). */
  remove(ids: readonly string[]): Promise<void>;
  /** Every entry, newest first, read in pages (entries that no longer parse are skipped). */
  all(pageSize?: number): AsyncGenerator<DeadLetterEntry>;
}

/** Entries are jobs of the `dead-letter` queue that no worker consumes, so Bull Board shows them too. */
export function createDeadLetterStore(queue: Queue): DeadLetterStore {
  function build(entry: NewDeadLetter): DeadLetterEntry {
    return DeadLetterEntry.parse({ ...entry, id: entry.id ?? randomUUID(), v: DEAD_LETTER_VERSION });
  }
  function job(entry: DeadLetterEntry): Job {
    return new Job(queue, entry.error.code, entry, { jobId: entry.id, removeOnComplete: false, removeOnFail: false }, entry.id);
  }
  function removeTo(multi: ChainableCommander, id: string): void {
    multi.lrem(queue.toKey('wait'), 0, id);
    multi.lrem(queue.toKey('paused'), 0, id);
    multi.del(queue.toKey(id), queue.toKey(`${id}:logs`));
  }
  return {
    addTo(multi, entry) {
      const built = build(entry);
      void job(built).addJob(multi as never);
      return built;
    },
    async add(entry) {
      const built = build(entry);
      await queue.add(built.error.code, built, { jobId: built.id });
      return built;
    },
    async get(id) {
      const found = await queue.getJob(id);
      if (!found) return undefined;
      const parsed = DeadLetterEntry.safeParse(found.data);
      return parsed.success ? parsed.data : undefined;
    },
    async list({ offset = 0, limit = 50 } = {}) {
      const jobs = await queue.getJobs(['waiting'], offset, offset + limit - 1, false);
      return jobs.flatMap((j) => {
        const parsed = DeadLetterEntry.safeParse(j.data);
        return parsed.success ? [parsed.data] : [];
      });
    },
    async count() {
      return queue.getJobCountByTypes('waiting');
    },
    removeTo,
    async remove(ids) {
      if (ids.length === 0) return;
      const client = (await queue.backend.client) as unknown as { multi(): ChainableCommander };
      const multi = client.multi();
      for (const id of ids) removeTo(multi, id);
      await execOrThrow(multi);
    },
    async *all(pageSize = 500) {
      // Ids first (one cheap read), then the entries page by page: entries added meanwhile are
      // not seen, entries removed meanwhile are skipped.
      const ids = await queue.getRanges(['waiting'], 0, -1, false);
      for (let at = 0; at < ids.length; at += pageSize) {
        const page = ids.slice(at, at + pageSize);
        const jobs = await Promise.all(page.map((id) => queue.getJob(id)));
        for (const found of jobs) {
          if (!found) continue;
          const parsed = DeadLetterEntry.safeParse(found.data);
          if (parsed.success) yield parsed.data;
        }
      }
    },
  };
}
