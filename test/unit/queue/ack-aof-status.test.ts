import { describe, expect, it } from 'vitest';
import { createAckGuard } from '../../../src/queue/ack-durability.js';
import type { RedisClient } from '../../../src/queue/connection.js';

/**
 * The acknowledgement check on Redis < 7.2 (no WAITAOF): INFO persistence. With `appendfsync
 * everysec` Redis postpones its AOF write(2) while a background fsync is pending (aof.c,
 * flushAppendOnlyFile: up to two seconds) and still answers the commands, so right after EXEC the
 * write may be only in `aof_buffer_length` while `aof_last_write_status` says ok. Such a write is
 * acknowledged only once `aof_current_size` has passed it; if the postponed write fails (a full
 * disk), the webhook gets 503, never 202.
 */

interface Persistence {
  status?: 'ok' | 'err';
  size?: number;
  buffered?: number;
  rewrites?: number;
  rewriting?: 0 | 1;
}

function persistence(p: Persistence): string {
  const lines = ['# Persistence', 'loading:0', 'aof_enabled:1', 'aof_rewrite_in_progress:' + (p.rewriting ?? 0), 'aof_rewrites:' + (p.rewrites ?? 0), 'aof_last_write_status:' + (p.status ?? 'ok')];
  if (p.size !== undefined) lines.push(`aof_current_size:${p.size}`);
  if (p.buffered !== undefined) lines.push(`aof_buffer_length:${p.buffered}`);
  return lines.join('\r\n') + '\r\n';
}

/** A Redis 7.0 stand-in whose INFO persistence answers come from `answers`, one per check (the last one repeats). */
function redis70(answers: Persistence[]): { client: RedisClient; asked: () => number } {
  let asked = 0;
  let probing = true;
  const client = {
    info: async (section: string) => {
      if (section === 'server') return '# Server\r\nredis_version:7.0.15\r\n';
      if (probing) return persistence({ size: 0, buffered: 0 });
      const answer = answers[Math.min(asked, answers.length - 1)]!;
      asked += 1;
      return persistence(answer);
    },
    call: async (...args: string[]) => {
      if (args[0] === 'CONFIG') return ['appendfsync', 'everysec'];
      if (args[0] === 'COMMAND') {
        probing = false;
        return [null];
      }
      throw new Error(`unexpected ${args.join(' ')}`);
    },
  };
  return { client: client as unknown as RedisClient, asked: () => asked };
}

async function guard(answers: Persistence[], timeoutMs = 500) {
  const fake = redis70(answers);
  const ack = createAckGuard(fake.client, { mode: 'aof', timeoutMs, slotKey: '{t}:counters' });
  expect(await ack.ready()).toMatchObject({ method: 'aof-status' });
  return { ack, asked: fake.asked };
}

describe('durable acknowledgement on Redis < 7.2 (INFO persistence)', () => {
  it('confirms at once when the AOF buffer is empty and the last write succeeded', async () => {
    const { ack, asked } = await guard([{ size: 1_000, buffered: 0 }]);
    await expect(ack.confirm()).resolves.toBeUndefined();
    expect(asked()).toBe(1);
  });

  it('waits for a postponed AOF write to reach the file before confirming', async () => {
    // The write sits in the buffer (bytes 1,000 to 1,300): not confirmed until the file holds 1,300 bytes.
    const { ack, asked } = await guard([
      { size: 1_000, buffered: 300 },
      { size: 1_000, buffered: 420 },
      { size: 1_250, buffered: 170 },
      { size: 1_420, buffered: 0 },
    ]);
    await expect(ack.confirm()).resolves.toBeUndefined();
    expect(asked()).toBe(4);
  });

  it('answers REDIS_NOT_DURABLE when the postponed write then fails (a full disk)', async () => {
    const { ack } = await guard([
      { size: 1_000, buffered: 300 },
      { status: 'err', size: 1_000, buffered: 300 },
    ]);
    await expect(ack.confirm()).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE', message: expect.stringContaining('aof_last_write_status:err') });
  });

  it('answers REDIS_NOT_DURABLE when the write does not reach the file within the timeout', async () => {
    const { ack } = await guard([{ size: 1_000, buffered: 300 }], 30);
    await expect(ack.confirm()).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE', message: expect.stringContaining('did not write its AOF within 30 ms') });
  });

  it('takes a new bound when an AOF rewrite starts meanwhile (sizes start over)', async () => {
    const { ack, asked } = await guard([
      { size: 50_000, buffered: 300 },
      { size: 2_000, buffered: 100, rewrites: 1, rewriting: 1 },
      { size: 2_050, buffered: 80, rewrites: 1, rewriting: 1 },
      { size: 2_100, buffered: 0, rewrites: 1, rewriting: 1 },
    ]);
    await expect(ack.confirm()).resolves.toBeUndefined();
    expect(asked()).toBe(4);
  });

  it('falls back to the last write status when Redis does not report the AOF sizes', async () => {
    const { ack, asked } = await guard([{}]);
    await expect(ack.confirm()).resolves.toBeUndefined();
    expect(asked()).toBe(1);
  });
});
