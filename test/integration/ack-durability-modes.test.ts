import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAckGuard } from '../../src/queue/ack-durability.js';
import { createRedis, whenReady } from '../../src/queue/connection.js';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';

describe('acknowledgement durability modes', () => {
  let child: ChildProcess;
  let dir: string;
  let noAofUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-no-aof-'));
    const port = await freePort();
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await waitForPing(port);
    noAofUrl = `redis://127.0.0.1:${port}`;
  });
  afterAll(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  async function guard(url: string, mode: 'aof' | 'replica' | 'none') {
    const connection = createRedis(url, 'producer');
    await whenReady(connection);
    return { connection, ack: createAckGuard(connection, { mode, timeoutMs: 100, slotKey: '{t}:counters' }) };
  }

  it('refuses aof on a Redis with AOF off, saying what to change', async () => {
    const { connection, ack } = await guard(noAofUrl, 'aof');
    await expect(ack.ready()).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE', message: expect.stringMatching(/AOF off \(appendonly no\).*TAXSYNC_ACK_DURABILITY=replica or none/) });
    connection.disconnect();
  });

  it('confirms with aof on the test Redis (AOF on) and says how', async () => {
    const { connection, ack } = await guard(inject('redisUrl'), 'aof');
    const plan = await ack.ready();
    expect(['waitaof', 'aof-status']).toContain(plan.method);
    await connection.set('{t}:probe', '1');
    await expect(ack.confirm()).resolves.toBeUndefined();
    await connection.del('{t}:probe');
    connection.disconnect();
  });

  it('refuses to confirm with replica when no replica answers, and warns at start', async () => {
    const { connection, ack } = await guard(noAofUrl, 'replica');
    const plan = await ack.ready();
    expect(plan).toMatchObject({ method: 'wait', weak: true });
    expect(plan.description).toContain('no connected replica');
    await expect(ack.confirm()).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE' });
    connection.disconnect();
  });

  it('confirms nothing with none, and says so at start', async () => {
    const { connection, ack } = await guard(noAofUrl, 'none');
    expect(await ack.ready()).toMatchObject({ method: 'none', weak: true });
    await expect(ack.confirm()).resolves.toBeUndefined();
    connection.disconnect();
  });
});
