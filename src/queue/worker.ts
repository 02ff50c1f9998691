import { Worker, type Job } from 'bullmq';
import type { RedisClient } from './connection.js';
import { recordOfJob } from './jobs.js';
import type { QueueName } from './names.js';
import type { Requeuer } from './requeue.js';
import { fullJitterDelay, type RetryPolicy } from './retry.js';
import type { Logger } from '../observability/logger.js';

export interface RecordWorkerOptions {
  queue: QueueName;
  prefix: string;
  /** A worker-role connection (maxRetriesPerRequest: null); BullMQ adds its blocking one. */
  connection: RedisClient;
  process: (job: Job, token?: string) => Promise<unknown>;
  concurrency: number;
  retry: RetryPolicy;
  requeuer: Requeuer;
  logger: Logger;
  /**
   * Lock duration of a job and interval of the stalled-job check: a job whose worker died runs
   * again after about one to three times this. @defaultValue 30000
   */
  stalledIntervalMs?: number;
}

/**
 * One BullMQ worker for a record queue. Stalled jobs (a worker that died) are moved back to wait
 * by BullMQ and processed again; a finished job's record is checked once more for events that
 * arrived too late to be seen (see Requeuer).
 */
export function createRecordWorker(options: RecordWorkerOptions): Worker {
  const stalledIntervalMs = options.stalledIntervalMs ?? 30_000;
  const worker = new Worker(options.queue, options.process, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    autorun: false,
    stalledInterval: stalledIntervalMs,
    // A dead worker's lock must run out before the stalled check can take its job back.
    lockDuration: stalledIntervalMs,
    // BullMQ honours a manual pause (queue.rateLimit, on a 429) only when a limiter is set; this
    // one is far above any real rate, so it never limits by itself.
    limiter: { max: 1_000_000, duration: 1_000 },
    maxStalledCount: 2,
    // Record jobs leave these out of their own options (src/queue/enqueue.ts): a finished job must
    // not stay, or its id (the record key) would block the record's next job. Final failures are
    // dead-lettered by the processor. (`{ count: 0 }` is what `true` means in a job's options.)
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    settings: {
      // Jobs ask for the BACKOFF_TYPE strategy; it is the only one taxsync uses.
      backoffStrategy: (attemptsMade: number) => fullJitterDelay(attemptsMade, options.retry),
    },
  });
  worker.on('completed', (job: Job) => {
    const of = recordOfJob(job);
    if (!('record' in of)) return;
    options.requeuer.ensureQueued(of.record).catch((error: unknown) => {
      options.logger.warn({ err: error, jobId: job.id }, 'could not check the record after its job completed');
    });
  });
  worker.on('error', (error) => options.logger.warn({ err: { message: error.message } }, `worker ${options.queue}: ${error.message}`));
  worker.on('stalled', (jobId) => options.logger.warn({ jobId, queue: options.queue }, 'stalled job recovered'));
  return worker;
}
