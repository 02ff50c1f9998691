import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { readDaemonFile, removeDaemonFile, writeDaemonFile, type DaemonInfo } from '../../../src/daemon/daemon-file.js';
import { NO_DAEMON, clientApi, clientEmulatorUrl, clientRedis } from '../../../src/daemon/find-daemon.js';
import { createLifecycle } from '../../../src/daemon/lifecycle.js';

/** A pid that certainly belongs to no process: one that just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

const info = (over: Partial<DaemonInfo> = {}): DaemonInfo => ({
  v: 1,
  pid: process.pid,
  command: 'start',
  started_at: '2026-11-20T10:00:00.000Z',
  http_url: 'http://127.0.0.1:8080',
  emulator_url: 'http://127.0.0.1:4010',
  ...over,
});

describe('the daemon file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-daemon-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is written whole, readable only by its owner, with no temporary file left beside it', () => {
    const path = writeDaemonFile(join(dir, '.taxsync'), info());
    expect(path).toBe(join(dir, '.taxsync', 'daemon.json'));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(info());
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, '.taxsync'))).toEqual(['daemon.json']);
    expect(readDaemonFile(join(dir, '.taxsync'))).toEqual({ state: 'running', info: info() });
  });

  it('is stale once the process that wrote it is gone', () => {
    const pid = deadPid();
    writeDaemonFile(dir, info({ pid }));
    expect(readDaemonFile(dir)).toEqual({ state: 'stale', info: info({ pid }) });
  });

  it('says what is wrong with a file it cannot read, and none when there is no file', () => {
    expect(readDaemonFile(dir)).toEqual({ state: 'none' });
    writeFileSync(join(dir, 'daemon.json'), '{"v": 1, "pid": "twelve"');
    expect(readDaemonFile(dir)).toMatchObject({ state: 'unreadable', reason: expect.stringMatching(/JSON/) });
    writeFileSync(join(dir, 'daemon.json'), '{"v": 1, "pid": "twelve"}');
    expect(readDaemonFile(dir)).toMatchObject({ state: 'unreadable', reason: expect.stringMatching(/^pid: /) });
  });

  it('is removed only by the daemon that wrote it: a second daemon may have replaced it', () => {
    writeDaemonFile(dir, info({ pid: process.pid }));
    removeDaemonFile(dir, process.pid + 1);
    expect(readDaemonFile(dir).state).toBe('running');
    removeDaemonFile(dir, process.pid);
    expect(readDaemonFile(dir)).toEqual({ state: 'none' });
  });
});

describe('commands find the daemon of their folder', () => {
  let dir: string;
  const logger = createLogger({ level: 'silent' });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-find-daemon-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const config = (env: Record<string, string> = {}) => loadConfig({ TAXSYNC_DATA_DIR: dir, ...env });

  it('say in one line that no daemon runs here, and start nothing of their own', async () => {
    await expect(clientRedis({ config: config(), logger })).rejects.toThrow(NO_DAEMON);
    await expect(clientEmulatorUrl(config())).rejects.toThrow(NO_DAEMON);
    const lifecycle = createLifecycle({ logger, deadlineMs: 1_000 });
    await expect(clientApi({ config: config(), logger, lifecycle })).rejects.toThrow(NO_DAEMON);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('name the stale file when its daemon is gone', async () => {
    const pid = deadPid();
    writeDaemonFile(dir, info({ pid, redis_socket: join(dir, 'redis', 'redis.sock') }));
    const error = (await clientRedis({ config: config(), logger }).then(
      () => new Error('expected no daemon'),
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toBe(`${NO_DAEMON} (the daemon that wrote ${dir}/daemon.json, pid ${pid}, is gone)`);
    expect(error.message).not.toContain('\n');
  });

  it('use REDIS_URL and TAX_API_URL when they are set, whatever the folder holds', async () => {
    expect(await clientRedis({ config: config({ REDIS_URL: 'redis://127.0.0.1:6390' }), logger })).toBe('redis://127.0.0.1:6390');
  });

  it("take the daemon's emulator from the file while its process lives", async () => {
    writeDaemonFile(dir, info());
    expect(await clientEmulatorUrl(config())).toBe('http://127.0.0.1:4010');
    writeDaemonFile(dir, info({ emulator_url: undefined }));
    await expect(clientEmulatorUrl(config())).rejects.toThrow(/sends to a configured TAX_API_URL/);
  });

  it('ask for REDIS_URL when the daemon uses a configured Redis (its URL, which may hold a password, is never written)', async () => {
    writeDaemonFile(dir, info());
    await expect(clientRedis({ config: config(), logger })).rejects.toThrow(/uses a configured REDIS_URL: set REDIS_URL/);
  });
});
