import { Queue } from 'bullmq';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { QUEUE_NAMES, type QueueName } from './names.js';

export type ConnectionRole = 'producer' | 'worker';

/** What code that only sends commands needs: one Redis server or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * Where Redis is: the URL (or unix socket path) of one server, or, with REDIS_CLUSTER=1, the URL of
 * one node of a Redis Cluster (the client discovers the others from it).
 */
export type RedisTarget = string | { readonly clusterSeed: string };

/**
 * How long a webhook server's Redis command may wait for the answer (`taxsync serve` / `start`
 * pass it). A Redis that is unreachable without refusing (stopped, partitioned: the socket stays
 * open) would otherwise hold every webhook, and /readyz, until it came back. Only there: a
 * webhook's transaction is small, while `ingest` and the dead-letter tools send transactions of
 * hundreds of events that a busy Redis may take longer than this to answer.
 */
export const WEBHOOK_COMMAND_TIMEOUT_MS = 2_000;

/**
 * Producers (webhook handlers) fail fast while Redis is away, so a webhook answers 503 instead of
 * hanging or answering 202 with nothing stored: refused or closed connections at once, an
 * unanswered one after WEBHOOK_COMMAND_TIMEOUT_MS (serve). A transaction that timed out may still be
 * applied when Redis answers again; the platform's retry of that delivery is then a duplicate.
 * Workers wait and reconnect by themselves (BullMQ requires maxRetriesPerRequest: null for them).
 */
export function createRedis(target: string, role: ConnectionRole, extra?: RedisOptions): Redis;
export function createRedis(target: RedisTarget, role: ConnectionRole, extra?: RedisOptions): RedisClient;
export function createRedis(target: RedisTarget, role: ConnectionRole, extra: RedisOptions = {}): RedisClient {
  if (typeof target !== 'string') return createCluster(target.clusterSeed, role, extra);
  const common: RedisOptions = {
    connectionName: `taxsync-${role}`,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...extra,
  };
  return role === 'producer'
    ? new Redis(target, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 })
    : new Redis(target, { ...common, maxRetriesPerRequest: null, enableOfflineQueue: true });
}

/**
 * The same roles on a Redis Cluster. The seed URL's user, password and TLS (rediss://) apply to
 * every node the client discovers, not only to the seed.
 */
function createCluster(seedUrl: string, role: ConnectionRole, extra: RedisOptions): Cluster {
  // Auto-pipelining is an option of the cluster client, not of its node connections.
  const { enableAutoPipelining, ...nodeExtra } = extra;
  const seed = new URL(seedUrl);
  const tls = seed.protocol === 'rediss:';
  const node = { host: seed.hostname.replace(/^\[(.*)\]$/, '$1'), port: seed.port === '' ? 6379 : Number(seed.port) };
  const redisOptions = {
    connectionName: `taxsync-${role}`,
    ...(seed.username === '' ? {} : { username: decodeURIComponent(seed.username) }),
    ...(seed.password === '' ? {} : { password: decodeURIComponent(seed.password) }),
    ...(tls ? { tls: {} } : {}),
    ...(nodeExtra as ClusterOptions['redisOptions']),
  };
  const common: ClusterOptions = {
    clusterRetryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    slotsRefreshTimeout: 5_000,
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    // With TLS, nodes are reached by the names they announce so certificates match (ioredis README,
    // "AWS ElastiCache Clusters with TLS").
    ...(tls ? { dnsLookup: (address: string, done: (err: null, address: string) => void) => done(null, address) } : {}),
  };
  return role === 'producer'
    ? new Cluster([node], { ...common, enableOfflineQueue: false, redisOptions: { ...redisOptions, maxRetriesPerRequest: 1, connectTimeout: 2_000 } })
    : new Cluster([node], { ...common, enableOfflineQueue: true, redisOptions: { ...redisOptions, maxRetriesPerRequest: null } });
}

/**
 * True when the server holding `key` answers. On a cluster a bare PING reaches any node, so a
 * command on the key asks the master that owns the installation's slot.
 */
export async function answers(client: RedisClient, key: string): Promise<boolean> {
  if (client instanceof Cluster) return (await client.exists(key)) >= 0;
  return (await client.ping()) === 'PONG';
}

/** Resolves once `client` is ready; rejects with the first connection error before that (CLI commands: fail, do not wait). */
export function whenReady(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const ready = () => {
      client.off('error', failed);
      resolve();
    };
    const failed = (error: Error) => {
      client.off('ready', ready);
      reject(error);
    };
    client.once('ready', ready);
    client.once('error', failed);
  });
}

/** Every queue on one shared connection, so one MULTI can span them. */
export function createQueues(connection: RedisClient, prefix: string): Record<QueueName, Queue> {
  const make = (name: QueueName) => new Queue(name, { connection, prefix });
  return {
    [QUEUE_NAMES.customers]: make(QUEUE_NAMES.customers),
    [QUEUE_NAMES.transactions]: make(QUEUE_NAMES.transactions),
    [QUEUE_NAMES.vatSubmissions]: make(QUEUE_NAMES.vatSubmissions),
    [QUEUE_NAMES.deadLetter]: make(QUEUE_NAMES.deadLetter),
  } as Record<QueueName, Queue>;
}

export async function closeQueues(queues: Record<QueueName, Queue>): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}
