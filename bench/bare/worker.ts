/**
 * The bare-minimum worker as a process of its own (bench scenarios 5 and 6b's baseline): one PUT
 * per job with undici. Settings: REDIS_URL, BENCH_PREFIX, BENCH_QUEUE, BENCH_API_URL,
 * BENCH_CONCURRENCY, and BENCH_FROM_ORDER=1 when jobs hold raw Shopify orders (the PUT names the
 * order's id) rather than prepared bodies.
 */
import { startBaselineWorker } from '../lib/baseline.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const worker = await startBaselineWorker(env('REDIS_URL'), env('BENCH_PREFIX'), env('BENCH_QUEUE'), env('BENCH_API_URL'), Number(env('BENCH_CONCURRENCY')), {
  fromOrder: process.env.BENCH_FROM_ORDER === '1',
});
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
