import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

const INSTALL_HINT =
  'No Redis for the tests: set REDIS_URL, or install redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), or start Docker for testcontainers.';

export { freePort } from '../../src/daemon/redis-probe.js';

/** Resolves once something answers a Redis PING on the port, or rejects after `deadlineMs`. */
export const waitForRedis = (port: number, deadlineMs = 10_000): Promise<void> => waitForPing(port, deadlineMs);

async function startLocalRedis(): Promise<{ url: string; stop: () => Promise<void> } | undefined> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'taxsync-test-redis-'));
  let child: ChildProcess;
  try {
    child = spawn(
      'redis-server',
      // AOF on (everysec), as taxsync's default acknowledgement durability (TAXSYNC_ACK_DURABILITY=aof) requires.
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', dir],
      { stdio: 'ignore' },
    );
  } catch {
    return undefined;
  }
  const spawned = await new Promise<boolean>((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
  if (!spawned) return undefined;
  await waitForRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startContainerRedis(): Promise<{ url: string; stop: () => Promise<void> } | undefined> {
  try {
    const { GenericContainer } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine').withCommand(['redis-server', '--appendonly', 'yes']).withExposedPorts(6379).start();
    return {
      url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return async () => {};
  }
  const redis = (await startLocalRedis()) ?? (await startContainerRedis());
  if (!redis) throw new Error(INSTALL_HINT);
  project.provide('redisUrl', redis.url);
  return redis.stop;
}
