import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isTaxsyncError } from '../../../src/domain/errors.js';
import type { AckGuard } from '../../../src/queue/ack-durability.js';
import type { RedisClient } from '../../../src/queue/connection.js';
import { createLeanConnection } from '../../../src/queue/lean-connection.js';
import { customerVersion, useQueueRig } from '../../helpers/queue-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * The producer's transactions and their durability check (WAITAOF / WAIT) run on the lean
 * connection. ioredis sends a command a dropped connection left unanswered again on the new one,
 * where WAITAOF / WAIT count that connection's writes (none) and confirm at once a write the drop
 * may have lost. A drop while a write is being confirmed must answer REDIS_NOT_DURABLE (503), never
 * a 2xx.
 */
describe("the producer's lean connection", () => {
  const ctx = useRedis();
  const rig = useQueueRig(ctx);

  const killAndWaitForReconnect = async (client: RedisClient): Promise<void> => {
    await ctx.redis.client('KILL', 'ID', String(await (client as Redis).client('ID')));
    // The close is noticed asynchronously: give it a moment, then wait for the new connection.
    await new Promise((r) => setTimeout(r, 200));
    const deadline = Date.now() + 10_000;
    while (client.status !== 'ready') {
      if (Date.now() > deadline) throw new Error('the lean connection did not come back');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('counts its drops', async () => {
    const lean = createLeanConnection(rig.connection);
    const client = await lean.get(rig.connection);
    expect(lean.drops()).toBe(0);
    await killAndWaitForReconnect(client);
    expect(lean.drops()).toBe(1);
  });

  it('answers REDIS_NOT_DURABLE when the connection drops while the write is being confirmed', async () => {
    let confirms = 0;
    // The confirmation is cut off by a drop, and then (as ioredis's resend would) answers "durable".
    const ack: AckGuard = {
      mode: 'aof',
      ready: () => Promise.resolve({ mode: 'aof', method: 'waitaof', weak: false, description: 'test' }),
      async confirm(on) {
        confirms += 1;
        await killAndWaitForReconnect(on!);
      },
    };
    const producer = rig.producerWith({ ack });
    const event = customerVersion({ kind: 'customer', source: 'api', external_id: 'c-drop' }, 1);

    const error = await producer.accept({ events: [event] }).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(confirms).toBe(1);
    expect(isTaxsyncError(error) && error.code).toBe('REDIS_NOT_DURABLE');
    // The platform's retry of the delivery is stored again or found a duplicate: both answer 2xx.
    ack.confirm = () => Promise.resolve();
    expect((await producer.accept({ events: [event] })).outcomes).toEqual(['duplicate']);
  });
});
