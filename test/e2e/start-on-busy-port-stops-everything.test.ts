import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answersPing } from '../../src/daemon/redis-probe.js';
import { buildCli, spawnCli } from '../helpers/cli.js';

/**
 * Item 9 of issue 14: `taxsync start` (and `serve`) failing to listen stops everything it had
 * started — above all the zero-configuration redis-server, a child process that outlives its
 * parent unless stopped — and exits 1 with one line naming the address and what to do.
 */

/** The pids of processes whose command line mentions `text` (our own temporary folder). */
function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe('a start that cannot listen', () => {
  let main: string;
  let busy: Server | undefined;
  let dataDir: string | undefined;

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  afterEach(async () => {
    // Whatever this test's CLI left behind (only processes started in its own folder) is stopped.
    if (dataDir !== undefined) {
      for (const pid of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
    await new Promise<void>((done) => (busy ? busy.close(() => done()) : done()));
    busy = undefined;
    dataDir = undefined;
  });

  it.each(['start', 'serve'])('`taxsync %s` on a port in use exits 1 with one line naming it, and leaves no redis-server running', async (command) => {
    busy = createServer();
    await new Promise<void>((done) => busy!.listen(0, '127.0.0.1', () => done()));
    const port = (busy.address() as { port: number }).port;
    dataDir = mkdtempSync(join(tmpdir(), 'taxsync-busy-'));

    const run = spawnCli(main, [command], {
      TAXSYNC_DATA_DIR: dataDir,
      TAXSYNC_HTTP_HOST: '127.0.0.1',
      TAXSYNC_HTTP_PORT: String(port),
      LOG_LEVEL: 'silent',
    });
    let stderr = '';
    run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = await Promise.race([
      run.exited,
      new Promise<'hung'>((done) => setTimeout(() => done('hung'), 60_000)),
    ]);
    if (exit === 'hung') await run.kill();

    expect(exit, run.output()).toEqual({ code: 1, signal: null });
    expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
    expect(stderr).toContain(`127.0.0.1:${port}`);
    expect(stderr).toContain('EADDRINUSE');
    expect(stderr).toMatch(/TAXSYNC_HTTP_PORT=\d+/);
    // It had started its local redis-server (nothing else listens on that socket); now none is left.
    expect(await answersPing(resolve(dataDir, 'redis', 'redis.sock'))).toBe(false);
    expect(processesMentioning(dataDir)).toEqual([]);
  }, 90_000);
});
