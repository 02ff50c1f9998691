import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/queue/keys.js';
import { buildCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';

/**
 * DESIGN.md invariant 3: a connector's source never changes, so every daemon refuses to start when
 * one did (unless told `--accept-source-change`). Issue 18: `node dist/workers/serve.js` skipped
 * the guard. Each way of starting a daemon — the CLI and the files in workers/ — is run against a
 * Redis that remembers another source for Shopify.
 */
describe('every entry point applies the source guard', () => {
  const ctx = useRedis();
  let main: string;
  let dataDir: string;
  let run: CliProcess | undefined;

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  afterEach(async () => {
    await run?.kill();
    run = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const entry = (kind: 'cli' | 'worker', command: string): [string, string[]] =>
    kind === 'cli' ? [main, [command]] : [join(dirname(dirname(dirname(main))), 'workers', `${command}.js`), []];

  function spawn(kind: 'cli' | 'worker', command: string, extra: string[] = []): CliProcess {
    dataDir = mkdtempSync(join(tmpdir(), 'taxsync-guard-'));
    const [file, args] = entry(kind, command);
    return spawnCli(file, [...args, ...extra], {
      REDIS_URL: ctx.url,
      TAXSYNC_PREFIX: ctx.prefix,
      TAXSYNC_DATA_DIR: dataDir,
      TAXSYNC_HTTP_HOST: '127.0.0.1',
      TAXSYNC_HTTP_PORT: '0',
      SHOPIFY_WEBHOOK_SECRET: 'shopify-test-secret',
      LOG_LEVEL: 'silent',
    });
  }

  const cases = (['cli', 'worker'] as const).flatMap((kind) => (['start', 'serve', 'work'] as const).map((command) => [kind, command] as const));

  it.each(cases)('%s %s refuses to start when the Shopify source changed, naming it, and leaves the remembered source', async (kind, command) => {
    const keys = createKeys(ctx.prefix);
    await ctx.redis.hset(keys.sources, 'shopify', 'old-shop');
    run = spawn(kind, command);
    const exit = await run.exited;
    expect(exit.code, run.output()).toBe(1);
    expect(run.output()).toContain('CONFIG_INVALID');
    expect(run.output()).toContain('shopify: "old-shop" → "shopify"');
    expect(await ctx.redis.hget(keys.sources, 'shopify')).toBe('old-shop');
  }, 60_000);

  it('the serve worker with --accept-source-change starts and remembers the new source', async () => {
    const keys = createKeys(ctx.prefix);
    await ctx.redis.hset(keys.sources, 'shopify', 'old-shop');
    run = spawn('worker', 'serve', ['--accept-source-change']);
    const deadline = Date.now() + 45_000;
    while ((await ctx.redis.hget(keys.sources, 'shopify')) !== 'shopify') {
      if (Date.now() > deadline) throw new Error(`the source was not updated:\n${run.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await ctx.redis.hget(keys.sources, 'shopify')).toBe('shopify');
  }, 60_000);
});
