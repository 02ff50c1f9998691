import { Redis } from 'ioredis';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { replayEntries } from '../../src/dead-letters/service.js';
import type { CanonicalEvent } from '../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../src/domain/record-key.js';
import { Secret } from '../../src/domain/secret.js';
import { createCustomerHandler } from '../../src/processors/customer.js';
import { customersQueueHandler } from '../../src/processors/customers-queue.js';
import { createExemptionHandler } from '../../src/processors/exemption.js';
import { createTransactionHandler } from '../../src/processors/transaction.js';
import type { DeadLetterEntry } from '../../src/queue/dead-letter.js';
import { RECORD_QUEUES } from '../../src/queue/names.js';
import type { RecordStore } from '../../src/queue/record-state.js';
import { createCustomerWriters, type CustomerWriterOptions, type CustomerWriters } from '../../src/queue/customer-writer.js';
import { createRefundLedger, type RefundLedger } from '../../src/queue/refund-ledger.js';
import { pipelineDlqDeps } from './dead-letters.js';
import { startModelEngine, type Fault, type ModelEngine } from './model-engine.js';
import { createPipeline, type Pipeline } from './pipeline.js';
import { uniquePrefix } from './redis.js';

/**
 * The rig of the model tests (test/integration/model/): taxsync's real producer, record processor,
 * handlers, dead-letter tools and recovery sweep on real Redis (a prefix per run), sending to the
 * model engine (./model-engine.ts) over HTTP. A run can stop a job between two of its steps as a
 * killed worker would (`crashes`): the step throws, nothing after it runs, and BullMQ retries the
 * job (or, out of attempts, drops it: then only the sweep brings the record back).
 */

/** Where a job can be stopped. */
export type CrashPoint =
  /** After the API answered, before the version is marked applied. */
  | 'before-mark'
  /** After the mark, before BullMQ completes the job. */
  | 'after-mark'
  /** After a refund's write was answered, before its share is recorded in the refund ledger. */
  | 'before-ledger'
  /** After a customer's write was answered (its own job's or an invoice's), before its hash is kept and its writer lock given back: the lock is left to expire. */
  | 'after-customer-call';

export interface Crash {
  point: CrashPoint;
  /** The record (its external id). */
  record: string;
  /** The n-th time (0-based) the record passes that point. */
  nth: number;
}

export class SimulatedCrash extends Error {
  constructor(point: CrashPoint) {
    super(`simulated crash (${point})`);
    this.name = 'SimulatedCrash';
  }
}

export interface ModelRig {
  engine: ModelEngine;
  /** The run's key prefix. */
  prefix: string;
  pipeline: Pipeline;
  clients: ApiClients;
  records: RecordStore;
  /** Turns the injected crashes on or off. */
  crashesOn: boolean;
  crashed: Crash[];
  accept(event: CanonicalEvent): Promise<void>;
  /** Until every record is applied (or dead-lettered) and no job is left, sweeping meanwhile; false past the deadline. */
  settle(keys: readonly RecordKey[], deadlineMs?: number): Promise<boolean>;
  /** `taxsync dlq replay` of every entry (or `--remap`). */
  replayAll(options?: { remap?: boolean }): Promise<void>;
  deadLetters(): Promise<DeadLetterEntry[]>;
  close(): Promise<void>;
}

export async function startModelRig(
  redisUrl: string,
  options: {
    crashes?: readonly Crash[];
    faults?: (key: string, n: number) => Fault;
    coalesceMs?: number;
    /** Transactions and customers workers each (two = two worker processes on one Redis). */
    workers?: number;
    queues?: readonly ('customers' | 'transactions')[];
    /** Runs where a job is stopped, before it stops (a test delivers the event that races the stopped job here). */
    onCrash?: (crash: Crash) => Promise<void>;
    /** The workers' lock duration and stalled-check interval. @defaultValue 30000 */
    stalledIntervalMs?: number;
    /** Runs before each mark of a version as applied (a test races an operator's command with the job here). */
    beforeMark?: (record: RecordKey, seq: number) => Promise<void>;
    /** The customers' writer locks: time to live and how long a writer waits. @defaultValue the product's */
    writer?: CustomerWriterOptions;
  } = {},
): Promise<ModelRig> {
  const prefix = uniquePrefix();
  const engine = await startModelEngine();
  if (options.faults) engine.faults = options.faults;
  const retry = { attempts: 8, baseMs: 5, capMs: 40 };
  const counts = new Map<string, number>();
  const rig = { engine, prefix, crashesOn: true, crashed: [] } as unknown as ModelRig;
  const maybeCrash = async (point: CrashPoint, record: string): Promise<void> => {
    if (!rig.crashesOn) return;
    const at = `${point}|${record}`;
    const n = counts.get(at) ?? 0;
    counts.set(at, n + 1);
    const crash = options.crashes?.find((c) => c.point === point && c.record === record && c.nth === n);
    if (crash) {
      rig.crashed.push(crash);
      await options.onCrash?.(crash);
      throw new SimulatedCrash(point);
    }
  };
  const pipeline = await createPipeline(redisUrl, prefix, {
    retry,
    wait: { deadlineMs: 1_500, refundDeadlineMs: 1_500, baseMs: 20, capMs: 100 },
    coalesceDelayMs: options.coalesceMs ?? 0,
    coalesceMs: options.coalesceMs ?? 0,
    coalesceMaxMs: 200,
    ...(options.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: options.stalledIntervalMs }),
    processorRecords: (records) => ({
      ...records,
      async markApplied(key, seq, event, now, also) {
        await options.beforeMark?.(key, seq);
        await maybeCrash('before-mark', key.external_id);
        const result = await records.markApplied(key, seq, event, now, also);
        await maybeCrash('after-mark', key.external_id);
        return result;
      },
    }),
  });
  const clients = createApiClients({
    taxUrl: engine.url,
    clientId: 'model-client',
    clientSecret: new Secret('model-secret'),
    timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
  });
  const ledger = createRefundLedger(pipeline.producerConnection, pipeline.keys);
  const crashingLedger: RefundLedger = {
    ...ledger,
    async record(invoice, refund, fraction) {
      await maybeCrash('before-ledger', refund);
      return ledger.record(invoice, refund, fraction);
    },
  };
  const writers = crashingWriters(createCustomerWriters(pipeline.producerConnection, pipeline.keys, options.writer), maybeCrash);
  const settings = DEFAULT_SETTINGS.mapping;
  const transactions = createTransactionHandler({ tax: clients.tax, records: pipeline.records, ledger: crashingLedger, settings, writers });
  const customer = createCustomerHandler({ tax: clients.tax, settings, writers });
  const exemption = createExemptionHandler({ tax: clients.tax, records: pipeline.records, settings });
  const queues = options.queues ?? ['customers', 'transactions'];
  for (let i = 0; i < (options.workers ?? 1); i++) {
    if (queues.includes('transactions')) await pipeline.startWorker('transactions', transactions, { concurrency: 2 });
    if (queues.includes('customers')) {
      await pipeline.startWorker('customers', customersQueueHandler({ customer, exemption }), { concurrency: 2 });
    }
  }
  const dlq = pipelineDlqDeps(pipeline, { actor: 'model', retry });
  const cleanup = new Redis(redisUrl, { maxRetriesPerRequest: 3 });

  Object.assign(rig, {
    pipeline,
    clients,
    records: pipeline.records,
    async accept(event: CanonicalEvent) {
      await pipeline.producer.accept({ events: [event] });
    },
    async settle(keys: readonly RecordKey[], deadlineMs = 20_000) {
      const until = Date.now() + deadlineMs;
      let quietRounds = 0;
      while (Date.now() < until) {
        await pipeline.requeuer.sweep();
        let busy = false;
        for (const name of RECORD_QUEUES) {
          const c = await pipeline.queues[name].getJobCounts('waiting', 'active', 'delayed', 'prioritized');
          if (Object.values(c).some((n) => n > 0)) busy = true;
        }
        for (const key of keys) if (await pipeline.records.hasUnapplied(key)) busy = true;
        quietRounds = busy ? 0 : quietRounds + 1;
        // Twice quiet in a row, a sweep apart: nothing was in between two steps.
        if (quietRounds >= 2) return true;
        await new Promise((r) => setTimeout(r, 30));
      }
      return false;
    },
    async replayAll(replayOptions: { remap?: boolean } = {}) {
      const entries = await rig.deadLetters();
      if (entries.length === 0) return;
      await replayEntries(dlq, entries, { actor: 'model', selection: { ids: entries.map((e) => e.id) }, remap: replayOptions.remap ?? false });
    },
    async deadLetters() {
      const out: DeadLetterEntry[] = [];
      for await (const entry of pipeline.deadLetters.all()) out.push(entry);
      return out;
    },
    async close() {
      await pipeline.close();
      await clients.close();
      await engine.close();
      const stream = cleanup.scanStream({ match: `${prefix}*`, count: 500 });
      for await (const keys of stream as AsyncIterable<string[]>) if (keys.length > 0) await cleanup.unlink(...keys);
      await cleanup.quit();
    },
  });
  return rig;
}

/**
 * Writers that can be stopped after a customer's write was answered, as a killed worker is: the
 * hash is not kept and the lock is not given back (it expires by itself).
 */
function crashingWriters(writers: CustomerWriters, maybeCrash: (point: CrashPoint, record: string) => Promise<void>): CustomerWriters {
  return {
    async take(customer, offer) {
      const writer = await writers.take(customer, offer);
      let dead = false;
      return {
        state: writer.state,
        sending: (options) => writer.sending(options),
        async accepted(hash) {
          try {
            await maybeCrash('after-customer-call', customer.external_id);
          } catch (crash) {
            dead = true;
            writer.abandon();
            throw crash;
          }
          return writer.accepted(hash);
        },
        release: () => (dead ? Promise.resolve() : writer.release()),
        abandon: () => writer.abandon(),
      };
    },
  };
}

/** The dead-letter entries of one record. */
export function entriesOf(entries: readonly DeadLetterEntry[], key: RecordKey): DeadLetterEntry[] {
  const wanted = recordKeyString(key);
  return entries.filter((e) => e.record !== null && recordKeyString(e.record) === wanted);
}
