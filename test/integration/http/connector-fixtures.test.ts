import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { CONNECTORS } from '../../../src/connectors/registry.js';
import { recordKeyString, type RecordKey } from '../../../src/domain/record-key.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer } from '../../../src/queue/producer.js';
import { useRedis } from '../../helpers/redis.js';

interface Fixture {
  description: string;
  headers: Record<string, string>;
  contentType?: string;
  receivedAt: string;
  body: unknown;
  settings?: { source?: string };
  expect: { kind: string; events?: { id: string; occurred_at: string; record: RecordKey }[] };
}

const SECRET = 'fixture-e2e-secret';
const root = new URL('../../fixtures/connectors/', import.meta.url);

function fixtures(id: string): [string, Fixture][] {
  const dir = new URL(`${id}/`, root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture]);
}

// Signed fixtures for every connector, posted to the real route, land in Redis as the documented
// canonical events (the newest per record in the latest-state store) with one job per record.
describe('signed fixtures through POST /webhooks/:connector', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
  });
  afterEach(async () => {
    await closeQueues(queues);
    connection.disconnect();
  });

  async function appFor(id: string, fixture: Fixture): Promise<FastifyInstance> {
    const connector = CONNECTORS[id]!;
    return buildApp({
      connectors: {
        [id]: {
          connector,
          settings: { source: fixture.settings?.source ?? connector.defaultSource, secrets: [new Secret(SECRET)], toleranceSeconds: 300 },
          connection: { id, source: fixture.settings?.source ?? connector.defaultSource, externalIdPrefix: '' },
        },
      },
      producer: createProducer({
        queues,
        connection,
        keys: createKeys(ctx.prefix),
        deadLetters: createDeadLetterStore(queues['dead-letter']),
        trace: { maxEntries: 10, maxAgeMs: 60_000 },
        deliveryTtlMs: 60_000,
        coalesceDelayMs: 0,
      }),
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 1024 * 1024,
      rawBodyLimitBytes: 65536,
      ready: async () => true,
      health: { usesEmulator: true },
      clock: () => new Date(fixture.receivedAt),
    });
  }

  for (const id of Object.keys(CONNECTORS)) {
    for (const [file, fixture] of fixtures(id)) {
      if (fixture.expect.kind === 'ping') continue;
      it(`${id}/${file}: ${fixture.description}`, async () => {
        const app = await appFor(id, fixture);
        const body = Buffer.from(typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body));
        const res = await app.inject({
          method: 'POST',
          url: `/webhooks/${id}`,
          payload: body,
          headers: {
            'content-type': fixture.contentType ?? 'application/json',
            ...fixture.headers,
            ...CONNECTORS[id]!.sign(body, SECRET, new Date(fixture.receivedAt)),
          },
        });
        await app.close();
        const expected = { events: 202, invalid: 202, ignored: 200 }[fixture.expect.kind];
        expect(res.statusCode).toBe(expected);

        const newest = new Map<string, { id: string }>();
        for (const event of fixture.expect.events ?? []) newest.set(recordKeyString(event.record), event);
        for (const [key, event] of newest) {
          const stored = await ctx.redis.get(`${ctx.prefix}:event:${key}`);
          expect(JSON.parse(stored ?? 'null')).toEqual(event);
        }
        const counts = await Promise.all(['customers', 'transactions'].map((q) => queues[q as QueueName].getJobCountByTypes('waiting')));
        expect(counts[0]! + counts[1]!).toBe(newest.size);
        if (fixture.expect.kind === 'invalid') {
          expect(await createDeadLetterStore(queues['dead-letter']).count()).toBe(1);
        }
      });
    }
  }
});
