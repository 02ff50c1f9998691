/**
 * The bare minimum a webhook receiver does (bench scenario 1 and 5's baseline): node:http, verify
 * the Shopify HMAC of the raw body, one Queue.add, 202. Settings from the environment:
 * REDIS_URL, BENCH_PREFIX, BENCH_QUEUE, BENCH_SECRET, BENCH_PORT.
 */
import { createServer } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { verifiedShopifyBodies } from './verified.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const secret = env('BENCH_SECRET');
const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
const queue = new Queue<{ body: string }>(env('BENCH_QUEUE'), { connection, prefix: env('BENCH_PREFIX') });

const server = createServer(
  { keepAliveTimeout: 60_000 },
  verifiedShopifyBodies(secret, (raw, _req, res) => {
    queue.add('order', { body: raw.toString('utf8') }, { removeOnComplete: true, removeOnFail: true }).then(
      () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted"}'),
      () => res.writeHead(503).end(),
    );
  }),
);
server.listen(Number(env('BENCH_PORT')), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void queue.close().then(() => connection.disconnect());
});
