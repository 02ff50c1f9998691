import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { ingestFile } from '../../../src/ingest/file.js';
import { useRedis } from '../../helpers/redis.js';

const line = (n: number) =>
  JSON.stringify({
    id: `erp-${n}`,
    type: 'customer.upserted',
    occurred_at: `2026-11-20T10:00:${String(n).padStart(2, '0')}Z`,
    record: { kind: 'customer', external_id: `C-${n}` },
    data: { name: `Customer ${n}` },
  });

describe('taxsync ingest', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;
  let file: string;

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
    producer = createProducer({
      queues,
      connection,
      keys: createKeys(ctx.prefix),
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    file = join(mkdtempSync(join(tmpdir(), 'taxsync-ingest-')), 'events.jsonl');
    writeFileSync(file, [line(1), line(2), '', '{"id": "broken"', line(3), JSON.stringify({ ...JSON.parse(line(4)), record: { kind: 'customer', source: 'shopify', external_id: 'x' } })].join('\n'));
  });

  afterEach(async () => {
    await closeQueues(queues);
    connection.disconnect();
  });

  const run = (extra: Partial<Parameters<typeof ingestFile>[0]> = {}) =>
    ingestFile({ file, producer, keys: createKeys(ctx.prefix), source: 'api', redis: connection, batchSize: 2, ...extra });

  it('queues valid lines, dead-letters invalid ones with their line number, and sums up', async () => {
    const summary = await run();
    expect(summary).toEqual({ lines: 6, resumedAfter: 0, blank: 1, queued: 3, duplicate: 0, stale: 0, invalid: 2 });
    expect(await queues.customers.getJobCountByTypes('waiting')).toBe(3);
    const entries = await createDeadLetterStore(queues['dead-letter']).list();
    expect(entries.map((e) => e.error.message.split(':')[0]).sort()).toEqual(['line 4', 'line 6']);
    expect(entries.find((e) => e.error.message.startsWith('line 6'))?.error.fields).toHaveProperty(['record.source']);
  });

  it('resumes after the last committed batch when run again', async () => {
    let calls = 0;
    const failing: Producer = {
      ...producer,
      accept: async (input) => {
        calls += 1;
        if (calls === 2) throw new Error('connection lost');
        return producer.accept(input);
      },
    };
    await expect(run({ producer: failing })).rejects.toThrow('connection lost');
    const second = await run();
    expect(second.resumedAfter).toBe(2);
    expect(second.queued).toBe(1);
    expect(await queues.customers.getJobCountByTypes('waiting')).toBe(3);
  });

  it('is idempotent when the whole file is read again', async () => {
    await run();
    const again = await run({ restart: true });
    expect(again).toMatchObject({ queued: 0, duplicate: 3, invalid: 2 });
    expect(await createDeadLetterStore(queues['dead-letter']).count()).toBe(2);
  });
});
