import { Cluster, type ChainableCommander } from 'ioredis';
import { TaxsyncError } from '../domain/errors.js';
import type { RedisClient } from './connection.js';
import { withScripts, type ScriptedChain } from './redis-scripts.js';

/**
 * BullMQ's job-adding scripts: all the producer's MULTI runs of BullMQ's ~60 (a dead letter is a
 * job of its own queue, a coalescing delay makes a delayed job).
 */
const JOB_ADDING = ['addStandardJob:', 'addDelayedJob:', 'addPrioritizedJob:'];

interface DefinedScript {
  lua: string;
  numberOfKeys: number | null;
  readOnly?: boolean;
}

/**
 * A second connection for the producer's transactions, with only the scripts they run: taxsync's
 * and BullMQ's job-adding ones, copied from the queues' connection. ioredis copies every script
 * defined on a connection into each MULTI it opens (the `Pipeline` constructor): on the queues'
 * connection that is BullMQ's ~60 definitions per webhook, about 5% of `taxsync serve`'s CPU.
 * The job is still added in the same MULTI as the latest-state write (one connection, one
 * transaction), so "stored" and "queued" stay one atomic step (DESIGN.md invariant 1).
 *
 * Opened on first use, closed when `from` ends (its owner's shutdown), reconnected by ioredis like
 * `from`. A write is confirmed durable on this connection (WAITAOF / WAIT count its own writes).
 */
export interface LeanConnection {
  /** The ready connection, or REDIS_UNAVAILABLE (503) while it is not. */
  get(bullClient: RedisClient): Promise<RedisClient>;
  /** A MULTI on it that BullMQ's `Job.addJob` accepts. */
  multi(client: RedisClient): ScriptedChain;
  /**
   * How many times the connection (a cluster's: any node's) has dropped. ioredis sends the
   * commands a drop left unanswered again on the new connection, a WAITAOF / WAIT included, and
   * there it counts that connection's writes (none) and confirms at once a write the drop may have
   * lost: the producer takes this count before EXEC and after the confirmation, and answers
   * REDIS_NOT_DURABLE (503) when they differ. (Turning the resend off is no way out: ioredis then
   * drops those commands without settling them, and the webhook would hang.)
   */
  drops(): number;
}

export function createLeanConnection(from: RedisClient): LeanConnection {
  let opening: Promise<RedisClient> | undefined;
  let current: RedisClient | undefined;
  let dropCount = 0;
  from.once('end', () => current?.disconnect());

  function open(bullClient: RedisClient): Promise<RedisClient> {
    // The same server (or cluster) and options: the producer role's fail-fast settings included.
    // (Both branches are the same call: the union's two `duplicate` signatures are not callable as one.)
    const lean: RedisClient = from instanceof Cluster ? from.duplicate() : from.duplicate();
    // Every drop is counted (a cluster's: any node's): see `drops`.
    if (lean instanceof Cluster) lean.on('+node', (node: { on(event: 'close', listener: () => void): void }) => node.on('close', () => (dropCount += 1)));
    else lean.on('close', () => (dropCount += 1));
    lean.on('error', () => {
      // Reported by `from`'s own listeners; this one only keeps an error from being unhandled.
    });
    current = lean;
    const defined = (bullClient as unknown as { scriptsSet: Record<string, DefinedScript> }).scriptsSet;
    for (const [name, script] of Object.entries(defined)) {
      if (!JOB_ADDING.some((prefix) => name.startsWith(prefix))) continue;
      lean.defineCommand(name, { lua: script.lua, numberOfKeys: script.numberOfKeys ?? undefined, ...(script.readOnly ? { readOnly: true } : {}) });
    }
    withScripts(lean);
    return new Promise<RedisClient>((resolve, reject) => {
      const ready = () => {
        lean.off('error', failed);
        resolve(lean);
      };
      const failed = (error: Error) => {
        lean.off('ready', ready);
        lean.disconnect();
        reject(new TaxsyncError('REDIS_UNAVAILABLE', `Redis is not reachable (${error.message})`, { cause: error }));
      };
      lean.once('ready', ready);
      lean.once('error', failed);
    });
  }

  return {
    drops: () => dropCount,
    async get(bullClient) {
      opening ??= open(bullClient).catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
      const lean = await opening;
      if (lean.status !== 'ready') {
        throw new TaxsyncError('REDIS_UNAVAILABLE', `Redis is not reachable (connection ${lean.status})`);
      }
      return lean;
    },
    multi(client) {
      const multi = withScripts(client).multi() as ScriptedChain & { runCommand?: unknown };
      // What BullMQ's Job.addJob calls on a transaction (its ioredis adapter adds the same).
      multi.runCommand = (name: string, args: unknown[]) => {
        (multi as unknown as Record<string, (a: unknown[]) => ChainableCommander>)[name]!(args);
        return multi;
      };
      return multi;
    },
  };
}
