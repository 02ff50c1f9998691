import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import { createAckGuard, type AckGuard } from '../../../src/queue/ack-durability.js';
import { createRedis, whenReady } from '../../../src/queue/connection.js';
import type { Redis } from 'ioredis';

/**
 * Group commit of the durable acknowledgement (src/queue/ack-durability.ts): webhooks whose writes
 * were answered in the same turn share one WAITAOF / INFO persistence. What must never happen is a
 * write confirmed by a check sent before that write was answered (the check would not cover it).
 */

interface Spy {
  /** Checks sent so far, in order: the moment (a shared counter) each was sent. */
  sentAt: number[];
  /** The send moments of the checks whose answer has arrived (one connection: in the order sent). */
  doneSentAt: number[];
  tick(): number;
}

/** Counts the checks a guard sends on `connection` (INFO persistence or WAITAOF), with when each went out. */
function spyOnChecks(connection: Redis): Spy {
  let clock = 0;
  const sentAt: number[] = [];
  const doneSentAt: number[] = [];
  const track = <T>(answer: Promise<T>): Promise<T> => {
    const at = clock++;
    sentAt.push(at);
    return answer.finally(() => doneSentAt.push(at));
  };
  const info = connection.info.bind(connection) as (section: string) => Promise<string>;
  const call = connection.call.bind(connection) as (...args: string[]) => Promise<unknown>;
  Object.assign(connection, {
    info: (section: string) => (section === 'persistence' ? track(info(section)) : info(section)),
    call: (...args: string[]) => (args[0] === 'WAITAOF' ? track(call(...args)) : call(...args)),
  });
  return { sentAt, doneSentAt, tick: () => clock++ };
}

async function rig(): Promise<{ connection: Redis; ack: AckGuard; spy: Spy }> {
  const connection = createRedis(inject('redisUrl'), 'producer');
  await whenReady(connection);
  const ack = createAckGuard(connection, { mode: 'aof', timeoutMs: 1_000, slotKey: '{ack-test}:counters' });
  await ack.ready();
  return { connection, ack, spy: spyOnChecks(connection) };
}

const pause = (kind: 'micro' | 'immediate' | 'timer') =>
  kind === 'micro' ? Promise.resolve() : kind === 'immediate' ? new Promise<void>((r) => setImmediate(r)) : new Promise<void>((r) => setTimeout(r, 1));

describe('durable acknowledgements share their confirmation', () => {
  it('confirms writes answered in the same turn with one check', async () => {
    const { connection, ack, spy } = await rig();
    try {
      await Promise.all(Array.from({ length: 25 }, () => ack.confirm()));
      expect(spy.sentAt).toHaveLength(1);
    } finally {
      connection.disconnect();
    }
  });

  it('never confirms a write with a check sent before that write was answered', async () => {
    const { connection, ack, spy } = await rig();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom('micro' as const, 'immediate' as const, 'timer' as const), { minLength: 1, maxLength: 30 }), async (pauses) => {
          // Each caller's write is answered at `answered`. Checks on one connection are answered
          // in the order sent, so when a caller is released, the checks answered by then must
          // include one sent after its write was answered: joining a check already sent would
          // release it with only older checks answered.
          const callers = pauses.map(async (kind) => {
            await pause(kind);
            const answered = spy.tick();
            await ack.confirm();
            expect(spy.doneSentAt.some((at) => at > answered), 'a check sent after the write was answered').toBe(true);
          });
          await Promise.all(callers);
        }),
        { numRuns: 60 },
      );
      // Shared: fewer checks than confirmations over the whole run.
      expect(spy.sentAt.length).toBeGreaterThan(0);
    } finally {
      connection.disconnect();
    }
  });

  it('fails every caller that joined a failed check, and the next caller gets a check of its own', async () => {
    const { connection, ack } = await rig();
    try {
      const info = connection.info.bind(connection) as (section: string) => Promise<string>;
      let failing = true;
      Object.assign(connection, {
        info: (section: string) => {
          if (section === 'persistence' && failing) {
            return Promise.resolve('# Persistence\r\naof_enabled:1\r\naof_last_write_status:err\r\n');
          }
          return info(section);
        },
      });
      const joined = await Promise.allSettled(Array.from({ length: 5 }, () => ack.confirm()));
      expect(joined.every((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'REDIS_NOT_DURABLE')).toBe(true);
      failing = false;
      await expect(ack.confirm()).resolves.toBeUndefined();
    } finally {
      connection.disconnect();
    }
  });
});
