import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TaxsyncError } from '../domain/errors.js';
import { answersPing, waitForPing } from './redis-probe.js';

export interface EmbeddedRedis {
  /** A `redis+unix://` style target for ioredis: the socket path. */
  socketPath: string;
  /** True when this process started it (and stops it on shutdown). */
  owned: boolean;
  stop: () => Promise<void>;
}

/** The socket of the zero-configuration redis-server of `dataDirInput` (TAXSYNC_DATA_DIR). */
export function embeddedSocketPath(dataDirInput: string): string {
  return socketPathFor(resolve(dataDirInput, 'redis'));
}

function socketPathFor(dataDir: string): string {
  const preferred = join(dataDir, 'redis.sock');
  // Unix socket paths are limited to ~104 bytes; fall back to a short path unique to the folder.
  if (preferred.length < 100) return preferred;
  return join(tmpdir(), `taxsync-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}.sock`);
}

/**
 * The zero-configuration Redis: a `redis-server` from PATH with AOF on and its data under
 * `<dataDir>/redis`, listening on a unix socket only. A second taxsync process on the same folder
 * (say `taxsync work` beside `taxsync serve`) reuses the running one.
 */
export async function startEmbeddedRedis(dataDirInput: string): Promise<EmbeddedRedis> {
  const dataDir = resolve(dataDirInput, 'redis');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const socketPath = socketPathFor(dataDir);
  if (await answersPing(socketPath)) return { socketPath, owned: false, stop: async () => {} };

  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port', '0',
      '--unixsocket', socketPath,
      '--unixsocketperm', '700',
      '--dir', dataDir,
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--maxmemory-policy', 'noeviction',
      '--save', '',
    ],
    { stdio: 'ignore' },
  );
  const started = await new Promise<boolean>((done) => {
    child.once('spawn', () => done(true));
    child.once('error', () => done(false));
  });
  if (!started) {
    throw new TaxsyncError(
      'CONFIG_INVALID',
      'REDIS_URL is not set and redis-server is not installed: install Redis (apt-get install redis-server, brew install redis) or set REDIS_URL',
    );
  }
  try {
    await waitForPing(socketPath, 10_000, () => child.exitCode !== null);
  } catch {
    child.kill('SIGKILL');
    throw new TaxsyncError('REDIS_UNAVAILABLE', `the local redis-server did not start (data under ${dataDir})`);
  }
  return {
    socketPath,
    owned: true,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        // SIGTERM makes redis-server flush the AOF and exit cleanly.
        child.kill('SIGTERM');
      }),
  };
}
