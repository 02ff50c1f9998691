import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';

export interface LocalCluster {
  /** The masters' client ports on 127.0.0.1, in the order `redis-cli --cluster create` got them. */
  ports: number[];
  /** The client port of the master that owns `key`'s slot. */
  ownerOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

/** Distinct free loopback ports (a port freed by freePort() could come back on the next call). */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** The node sees every slot served and every master. */
async function clusterReady(port: number, masters: number): Promise<boolean> {
  const node = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  try {
    await node.connect();
    const info = String(await node.call('CLUSTER', 'INFO'));
    return info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384') && info.includes(`cluster_known_nodes:${masters}\r\n`);
  } catch {
    return false;
  } finally {
    node.disconnect();
  }
}

/**
 * A Redis Cluster of `masters` masters and no replicas: redis-server processes in cluster mode on
 * free loopback ports (their cluster bus on free ports too), joined by `redis-cli --cluster create`.
 * Resolves once every node reports cluster_state:ok.
 */
export async function startLocalCluster(masters = 3, deadlineMs = 30_000): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'taxsync-test-cluster-'));
  const all = await distinctFreePorts(masters * 2);
  const ports = all.slice(0, masters);
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    ports.forEach((port, i) => {
      const child = spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-port', String(all[masters + i]),
          '--cluster-node-timeout', '15000',
          // AOF on, as taxsync's default acknowledgement durability (TAXSYNC_ACK_DURABILITY=aof) requires.
          '--appendonly', 'yes',
          '--appendfsync', 'always',
          '--appenddirname', `appendonly-${port}`,
          '--save', '',
          '--dir', dir,
        ],
        { stdio: 'ignore' },
      );
      child.once('error', () => undefined);
      children.push(child);
    });
    await Promise.all(ports.map((port, i) => waitForPing(port, deadlineMs, () => children[i]!.exitCode !== null)));
    await promisify(execFile)(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: deadlineMs },
    );
    const until = Date.now() + deadlineMs;
    for (;;) {
      const ready = await Promise.all(ports.map((port) => clusterReady(port, masters)));
      if (ready.every(Boolean)) break;
      if (Date.now() > until) throw new Error(`the Redis Cluster on ports ${ports.join(', ')} did not reach cluster_state:ok`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    ports,
    async ownerOf(key) {
      const node = new Redis(ports[0]!, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        const slot = Number(await node.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
        const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!owner) throw new Error(`no node owns slot ${slot}`);
        return owner[2][1];
      } finally {
        node.disconnect();
      }
    },
    stop,
  };
}
