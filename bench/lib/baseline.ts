import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'undici';

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
      const res = await pool.request({
        method: 'PUT',
        path: '/v1/transactions/',
        body: bodyOf(job.data.body),
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
      });
      await res.body.text();
      if (res.statusCode >= 300) throw new Error(`status ${res.statusCode}`);
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
