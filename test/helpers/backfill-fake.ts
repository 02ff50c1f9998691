import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pipeline } from './pipeline.js';

/** Starts a platform fake on a free local port; its base URL. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export const closeServer = (server: Server) => new Promise<void>((r) => server.close(() => r()));

/** A backfill's Redis, keys and producer from the test pipeline, with the platform's lister. */
export function backfillDeps<L>(pipeline: Pipeline, source: string, lister: L, connection = { id: source, source, externalIdPrefix: '' }) {
  return { redis: pipeline.producerConnection, keys: pipeline.keys, producer: pipeline.producer, lister, connection };
}
