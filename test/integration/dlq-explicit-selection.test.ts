import type { FastifyInstance } from 'fastify';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { buildCli, spawnCli } from '../helpers/cli.js';
import { keptDelivery, pipelineDlqDeps } from '../helpers/dead-letters.js';
import { createPipeline, type Pipeline } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const TOKEN = 'selection-test-admin-token-0123456789abcdef';
const kept = (id: string) => keptDelivery(id, { id: 1 });

describe('bulk dead-letter actions need an explicit selection (web view)', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let app: FastifyInstance;
  const headers = { authorization: `Bearer ${TOKEN}` };
  const form = { ...headers, 'content-type': 'application/x-www-form-urlencoded' };

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    app = await buildApp({
      connectors: {},
      producer: pipeline.producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 4096,
      rawBodyLimitBytes: 100,
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
      admin: {
        operators: [{ name: 'ops', token: new Secret(TOKEN) }],
        sessions: { redis: pipeline.producerConnection, keys: pipeline.keys },
        queues: Object.values(pipeline.queues),
        dlq: (actor) => pipelineDlqDeps(pipeline, { actor }),
      },
    });
    await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1'), kept('kept-2'), kept('kept-3')] });
  });
  afterEach(async () => {
    await app.close();
    await pipeline.close();
  });

  for (const action of ['discard', 'replay'] as const) {
    it(`answers 400 to a ${action} POST whose ids are empty or missing, and touches no entry`, async () => {
      for (const payload of ['id=', 'id=&id=', '', 'queue=ingest', 'id=+', 'all=1']) {
        const res = await app.inject({ method: 'POST', url: `/admin/dead-letters/${action}`, headers: form, payload });
        expect(res.statusCode, payload).toBe(400);
      }
      expect(await pipeline.deadLetters.count()).toBe(3);
    });

    it(`answers 400 to a ${action} plan with no selection, and plans everything only when asked with all=1`, async () => {
      for (const url of [`/admin/dead-letters/${action}`, `/admin/dead-letters/${action}?id=`, `/admin/dead-letters/${action}?queue=`]) {
        const res = await app.inject({ url, headers });
        expect(res.statusCode, url).toBe(400);
        expect(res.body).toContain('Choose the entries');
      }
      const plan = await app.inject({ url: `/admin/dead-letters/${action}?all=1`, headers });
      expect(plan.statusCode).toBe(200);
      // The plan: count, queues, codes; the confirmation posts the ids it shows.
      expect(plan.body).toContain('3 entries (ingest 3; INVALID_PAYLOAD 3)');
      expect(plan.body).toContain('By error class: invalid 3.');
      expect([...plan.body.matchAll(/name="id" value="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(['kept-1', 'kept-2', 'kept-3']);
      expect(await pipeline.deadLetters.count()).toBe(3);
    });
  }
});

describe('bulk dead-letter actions need an explicit selection (CLI)', () => {
  const ctx = useRedis();
  let main: string;

  beforeAll(async () => {
    main = await buildCli();
  }, 120_000);

  async function cli(args: string[]): Promise<{ code: number | null; output: string }> {
    const run = spawnCli(main, args, { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error' });
    const { code } = await run.exited;
    return { code, output: run.output() };
  }

  it('refuses replay and discard without ids, filters or --all with one line, and empty ids too', async () => {
    const pipeline = await createPipeline(ctx.url, ctx.prefix);
    try {
      await pipeline.producer.accept({ events: [], deadLetters: [kept('kept-1'), kept('kept-2')] });
      for (const args of [
        ['dlq', 'replay', '--yes'],
        ['dlq', 'discard', '--yes'],
        ['dlq', 'replay', '', '--yes'],
        ['dlq', 'discard', ' ', '--yes'],
        ['dlq', 'replay', '--queue', '', '--yes'],
      ]) {
        const res = await cli(args);
        expect(res.code, args.join(' ')).not.toBe(0);
        const lines = res.output.trim().split('\n');
        expect(lines, args.join(' ')).toHaveLength(1);
        expect(lines[0]).toMatch(/^taxsync: .*(ids|filter|--all)/);
      }
      expect(await pipeline.deadLetters.count()).toBe(2);

      // --all is a selection: everything, said out loud.
      const all = await cli(['dlq', 'discard', '--all', '--yes']);
      expect(all.code).toBe(0);
      expect(all.output).toContain('plan: discard 2 entries (ingest 2; INVALID_PAYLOAD 2)');
      expect(await pipeline.deadLetters.count()).toBe(0);
      const both = await cli(['dlq', 'replay', 'kept-1', '--all', '--yes']);
      expect(both.code).not.toBe(0);
    } finally {
      await pipeline.close();
    }
  });
});
