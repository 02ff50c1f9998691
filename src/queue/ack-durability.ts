import { Cluster, type Redis } from 'ioredis';
import type { AckDurability } from '../config/index.js';
import { TaxsyncError } from '../domain/errors.js';
import type { RedisClient } from './connection.js';

/**
 * What a 2xx to a webhook (and an ingest checkpoint, a replay) waits for after its transaction's
 * EXEC, so "stored" means "on disk" and not only "in Redis's memory" (DESIGN.md invariant 1).
 * An EXEC answered OK is not enough: with `appendfsync everysec` Redis answers before the fsync,
 * and when the AOF write itself fails (a full disk) it still answers OK to the commands of that
 * write and only refuses the next ones (MISCONF). docs/configuration.md, "Acknowledgement durability".
 *
 * - `aof`: Redis ≥ 7.2 (and Valkey): `WAITAOF 1 0 <timeout>` — the local AOF holds the write,
 *   fsynced. Older Redis has no WAITAOF: after each transaction `INFO persistence` must say AOF is
 *   on, its last write succeeded and the file holds the transaction (`aofHolds`: a failed write, a
 *   full disk, is caught; the fsync itself is left to `appendfsync`, so set it to `always` to close
 *   that window too).
 *
 * Webhooks answered together share one confirmation (`shared`, group commit).
 * - `replica`: `WAIT 1 <timeout>` — at least one replica holds the write (in memory).
 * - `none`: EXEC only, as Redis's own persistence settings make it.
 */
export type AckMethod = 'waitaof' | 'aof-status' | 'wait' | 'none';

export interface AckPlan {
  mode: AckDurability;
  method: AckMethod;
  /** One line for the start-up log: how acknowledgements are backed, and what that leaves open. */
  description: string;
  /** Whether the description is a warning (a weaker guarantee than the mode's name promises). */
  weak: boolean;
}

export interface AckGuard {
  readonly mode: AckDurability;
  /** Probes the server once (cached when it succeeds); fails when the mode cannot work there. */
  ready(): Promise<AckPlan>;
  /**
   * Resolves once what this connection (or `on`, another connection to the same server: WAITAOF
   * and WAIT count a connection's own writes) wrote is as durable as the mode asks;
   * REDIS_NOT_DURABLE otherwise.
   */
  confirm(on?: RedisClient): Promise<void>;
}

export interface AckOptions {
  mode: AckDurability;
  /** How long WAITAOF / WAIT may wait (TAXSYNC_ACK_TIMEOUT_MS). */
  timeoutMs: number;
  /** A key of the installation (its slot's master is asked, on a cluster). */
  slotKey: string;
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** The fields of `INFO persistence` the aof-status check reads. */
function persistenceOf(info: string) {
  const fields = new Map<string, string>();
  for (const line of info.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const bytes = (name: string) => {
    const value = fields.get(name);
    return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
  };
  return {
    enabled: fields.get('aof_enabled'),
    status: fields.get('aof_last_write_status'),
    size: bytes('aof_current_size'),
    buffered: bytes('aof_buffer_length'),
    // Sizes start over when a rewrite starts or ends.
    epoch: `${fields.get('aof_rewrites') ?? ''}/${fields.get('aof_rewrite_in_progress') ?? ''}`,
  };
}

function notDurable(message: string, cause?: unknown): TaxsyncError {
  return new TaxsyncError('REDIS_NOT_DURABLE', message, { retryable: true, ...(cause === undefined ? {} : { cause }) });
}

/** The connection that holds the installation's keys: the client itself, or on a cluster the master of their slot. */
async function nodeOf(client: RedisClient, slotKey: string, slot: { value?: number }): Promise<Redis> {
  if (!(client instanceof Cluster)) return client;
  slot.value ??= Number(await client.call('CLUSTER', 'KEYSLOT', slotKey));
  const nodeKey = client.slots[slot.value]?.[0];
  const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
  if (!node) throw new TaxsyncError('REDIS_UNAVAILABLE', `no connected master serves slot ${slot.value} of the installation`);
  return node;
}

export function createAckGuard(client: RedisClient, options: AckOptions): AckGuard {
  const slot: { value?: number } = {};
  let plan: Promise<AckPlan> | undefined;
  // Per connection, the confirmation not yet sent that new callers join (see `shared`).
  const pending = new Map<Redis, Promise<void>>();

  async function probe(): Promise<AckPlan> {
    const { mode } = options;
    if (mode === 'none') {
      return { mode, method: 'none', weak: true, description: 'TAXSYNC_ACK_DURABILITY=none: a 2xx means the events are in Redis memory; how durable that is depends on Redis alone' };
    }
    const node = await nodeOf(client, options.slotKey, slot);
    const server = await node.info('server');
    const version = field(server, 'valkey_version') ? `Valkey ${field(server, 'valkey_version')}` : `Redis ${field(server, 'redis_version') ?? '?'}`;
    if (mode === 'replica') {
      const replicas = Number(field(await node.info('replication'), 'connected_slaves') ?? 0);
      return {
        mode,
        method: 'wait',
        weak: replicas === 0,
        description:
          replicas === 0
            ? `TAXSYNC_ACK_DURABILITY=replica but ${version} has no connected replica: every webhook will answer 503 until one connects`
            : `acknowledgements wait for ${version}'s write to reach a replica (WAIT 1, ${replicas} connected)`,
      };
    }
    const persistence = await node.info('persistence');
    if (field(persistence, 'aof_enabled') !== '1') {
      throw new TaxsyncError(
        'REDIS_NOT_DURABLE',
        `TAXSYNC_ACK_DURABILITY=aof but ${version} has AOF off (appendonly no): turn it on (appendonly yes) or choose TAXSYNC_ACK_DURABILITY=replica or none (docs/configuration.md)`,
      );
    }
    const fsync = await node
      .call('CONFIG', 'GET', 'appendfsync')
      .then((answer) => (Array.isArray(answer) ? String(answer[1]) : 'unknown'))
      // Managed services often refuse CONFIG.
      .catch(() => 'unknown');
    const info = (await node.call('COMMAND', 'INFO', 'WAITAOF')) as unknown[];
    if (Array.isArray(info) && info[0] !== null && info[0] !== undefined) {
      return { mode, method: 'waitaof', weak: false, description: `acknowledgements wait for ${version}'s AOF fsync (WAITAOF 1 0; appendfsync ${fsync})` };
    }
    return {
      mode,
      method: 'aof-status',
      weak: fsync !== 'always',
      description:
        `${version} has no WAITAOF (Redis < 7.2): after each write taxsync checks INFO persistence (AOF on, last write ok), which catches a failed or full disk; ` +
        (fsync === 'always' ? 'appendfsync always makes each write durable before Redis answers' : `with appendfsync ${fsync} a power loss can still take up to a second of acknowledged writes (set appendfsync always, or use Redis ≥ 7.2)`),
    };
  }

  const guard: AckGuard = {
    mode: options.mode,
    ready() {
      // A failed probe (Redis away) is tried again next time; a successful one is kept.
      plan ??= probe().catch((error: unknown) => {
        plan = undefined;
        throw error;
      });
      return plan;
    },
    async confirm(on) {
      const { method } = await this.ready();
      if (method === 'none') return;
      // A key's slot is the same on every connection to the cluster: asked once, not per webhook.
      const node = await nodeOf(on ?? client, options.slotKey, slot);
      return shared(node, method);
    },
  };

  /**
   * Group commit: one confirmation serves every write whose EXEC was answered before it is sent.
   * WAITAOF and WAIT count all of a connection's writes sent before them, and INFO persistence
   * tells the AOF's state after every write Redis has answered, so a check sent after a write's
   * answer confirms that write. Callers that arrive in the same turn of the event loop (the EXEC
   * answers of one socket read) join one check, sent on the next turn; a caller arriving once it
   * is sent starts the next one. Each caller still sees its own failure: a failed check fails all
   * who joined it.
   */
  function shared(node: Redis, method: Exclude<AckMethod, 'none'>): Promise<void> {
    let batch = pending.get(node);
    if (batch === undefined) {
      batch = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        pending.delete(node);
        return check(node, method);
      });
      pending.set(node, batch);
    }
    return batch;
  }

  async function check(node: Redis, method: Exclude<AckMethod, 'none'>): Promise<void> {
    const timeout = String(options.timeoutMs);
    if (method === 'waitaof') {
      const answer = await node.call('WAITAOF', '1', '0', timeout).catch((error: unknown) => {
        throw notDurable(`Redis refused WAITAOF: ${error instanceof Error ? error.message : String(error)}`, error);
      });
      if (!(Array.isArray(answer) && Number(answer[0]) >= 1)) {
        throw notDurable(`Redis did not confirm the AOF fsync within ${options.timeoutMs} ms (a full or failing disk? INFO persistence: aof_last_write_status)`);
      }
      return;
    }
    if (method === 'wait') {
      const replicas = Number(await node.call('WAIT', '1', timeout));
      if (!(replicas >= 1)) throw notDurable(`no replica confirmed the write within ${options.timeoutMs} ms`);
      return;
    }
    await aofHolds(node);
  }

  /**
   * Redis < 7.2 (no WAITAOF): resolves once the AOF file holds every write Redis answered before
   * the call. An OK `aof_last_write_status` alone does not say so: with `appendfsync everysec`
   * Redis postpones the AOF write(2) while a background fsync is pending (up to 2 s) and answers
   * the commands all the same, so a write answered OK may still be only in Redis's AOF buffer — and
   * lost if that postponed write then fails (a full disk). The first `INFO persistence` after the
   * write bounds it: it lies within the first `aof_current_size + aof_buffer_length` bytes of the
   * AOF. Once `aof_current_size` (bytes written to the file) reaches that bound with the last write
   * OK, it is in the file; an AOF rewrite in between (sizes start over) takes a new bound.
   */
  async function aofHolds(node: Redis): Promise<void> {
    const deadline = Date.now() + options.timeoutMs;
    let bound: { epoch: string; bytes: number } | undefined;
    for (;;) {
      const info = persistenceOf(await node.info('persistence'));
      if (info.enabled !== '1') throw notDurable('Redis has AOF off (appendonly no) now');
      if (info.status !== 'ok') throw notDurable(`Redis could not write its AOF (aof_last_write_status:${info.status ?? '?'}): a full or failing disk?`);
      // A Redis that does not report the sizes: the last write's status is all there is to check.
      if (info.size === undefined || info.buffered === undefined) return;
      if (bound === undefined || bound.epoch !== info.epoch) bound = { epoch: info.epoch, bytes: info.size + info.buffered };
      if (info.size >= bound.bytes) return;
      if (Date.now() >= deadline) {
        throw notDurable(`Redis did not write its AOF within ${options.timeoutMs} ms (a slow or failing disk? INFO persistence: aof_buffer_length ${info.buffered})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  return guard;
}
