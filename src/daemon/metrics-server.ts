import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import type { RedisClient } from '../queue/connection.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, QueueSource } from '../observability/metrics.js';
import type { Keys } from '../queue/keys.js';
import { QUEUE_NAMES, RECORD_QUEUES, type QueueName } from '../queue/names.js';
import type { Secret } from '../domain/secret.js';
import { METRICS_REFUSED, metricsAllowed } from '../http/metrics-access.js';
import type { Lifecycle } from './lifecycle.js';
import { lastEvents } from '../activity/store.js';
import type { Connections } from '../config/connections.js';

/** What /metrics reads at scrape time, over this process's own queues and connection. */
export function queueSource(queues: Record<QueueName, Queue>, redis: RedisClient, keys: Keys, connections: Connections): QueueSource {
  return {
    connections,
    queues: RECORD_QUEUES.map((name) => queues[name]),
    deadLetter: queues[QUEUE_NAMES.deadLetter],
    counters: () => redis.hgetall(keys.counters),
    activity: () => lastEvents(redis, keys),
  };
}

/**
 * `taxsync work` has no webhook server: with TAXSYNC_METRICS_PORT set it answers GET /metrics
 * (and nothing else) on a listener of its own. Registers its shutdown; resolves to its URL.
 */
export async function serveMetrics(deps: { metrics: Metrics; host: string; port: number; logger: Logger; lifecycle: Lifecycle; token?: Secret }): Promise<string> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'only GET /metrics here' }));
      return;
    }
    if (!metricsAllowed(deps.token, { headers: request.headers, remoteAddress: request.socket.remoteAddress })) {
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="taxsync metrics"' }).end(JSON.stringify(METRICS_REFUSED));
      return;
    }
    deps.metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': deps.metrics.registry.contentType }).end(text),
      (error: unknown) => {
        deps.logger.error({ err: error }, 'metrics failed');
        response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal', message: 'internal error' }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  deps.lifecycle.onShutdown('metrics http', () => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  deps.logger.info({ address: url }, `metrics on ${url}/metrics`);
  return url;
}
