// Over 400 lines on purpose: the one zod schema of process.env and the config built from it (STYLE.md
// habit 5), so every setting, its default and its error are in one place.
import { join } from 'node:path';
import { z } from 'zod';
import { TaxsyncError } from '../domain/errors.js';
import { Secret } from '../domain/secret.js';
import { blankToUndefined, secret, secretList } from '../domain/env-fields.js';
import { apiUrlProblem, isLoopbackHost } from '../api/url-policy.js';
import { CONNECTOR_LIST, type ConnectorId, type PlatformApis } from '../connectors/registry.js';
import type { ConnectorConfig } from '../connectors/types.js';
import { describeIssues } from '../domain/field-errors.js';
import { deepFreeze } from '../domain/freeze.js';

/**
 * The one reader of process.env. Every setting has a name, a default and a line in
 * docs/configuration.md. loadConfig() reports every bad variable in one error and returns a frozen
 * object; secrets are wrapped in Secret so the config can be printed safely.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const optionalString = z.preprocess(blankToUndefined, z.string().trim().optional());
const int = (min: number, max: number, fallback: number) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be an integer' })
      .int({ error: 'must be an integer' })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` })
      .default(fallback),
  );
/** A non-negative decimal kept as its string (money never becomes a number): `0.05`. */
const decimal = (fallback: string) =>
  z.preprocess(blankToUndefined, z.string().trim().regex(/^\d{1,12}(\.\d{1,6})?$/, { error: 'must be a non-negative decimal such as 0.05' }).default(fallback));
const DURATION_UNITS_MS: Record<string, number> = { s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
/**
 * A duration such as `30m`, `90s`, `2h`, `1d`; a bare number is in `bareUnit` (so `30` = 30
 * minutes for a setting documented in minutes). Answers milliseconds. Four units and no
 * fractions: a library (ms, parse-duration) would accept spellings we would then have to document.
 */
const duration = (bareUnit: 's' | 'm', minMs: number, maxMs: number, fallback: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .default(fallback)
      .transform((text, ctx) => {
        const match = /^(\d+)\s*(s|m|min|h|d)?$/i.exec(text.trim());
        const ms = match ? Number(match[1]) * DURATION_UNITS_MS[(match[2] ?? bareUnit).toLowerCase()]! : NaN;
        if (Number.isNaN(ms)) {
          ctx.addIssue({ code: 'custom', message: `must be a duration such as 30m, 90s, 2h or 1d (a bare number is in ${bareUnit === 'm' ? 'minutes' : 'seconds'})` });
          return z.NEVER;
        }
        if (ms < minMs || ms > maxMs) {
          ctx.addIssue({ code: 'custom', message: `must be between ${minMs / 1000} s and ${maxMs / 86_400_000} days` });
          return z.NEVER;
        }
        return ms;
      }),
  );
const flag = z.preprocess(
  blankToUndefined,
  z.enum(['0', '1', 'true', 'false'], { error: 'must be 1 or 0' }).default('0').transform((v) => v === '1' || v === 'true'),
);

/** Tokens that open the admin routes or /metrics: long enough that guessing is hopeless. */
/**
 * TAXSYNC_COALESCE_MS's default, from the bench (docs/performance.md, "API cost: the coalescing
 * window"): well above the 20 ms between the saves of a 50-per-second loop, with room for the
 * jitter of a loaded machine, so such a burst costs two calls (its first update, then its last).
 * A lone update is not delayed at all, so webhook → API latency does not pay for it.
 */
export const DEFAULT_COALESCE_MS = 200;

export const MIN_TOKEN_LENGTH = 32;
const TOKEN_RULE = `must be at least ${MIN_TOKEN_LENGTH} characters (a random token, e.g. openssl rand -hex 32)`;
const longSecret = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .min(MIN_TOKEN_LENGTH, { error: TOKEN_RULE })
    .optional()
    .transform((v) => (v === undefined ? undefined : new Secret(v))),
);

/** An operator of the admin routes: the name the audit log records, and the token that signs them in. */
export interface Operator {
  readonly name: string;
  readonly token: Secret;
}

const OPERATOR_NAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

/**
 * TAXSYNC_ADMIN_TOKENS: `alice:<token>,bob:<token>`. Every problem names the operator, never the
 * token (a malformed entry is reported by its position).
 */
const operatorList = z.preprocess(
  blankToUndefined,
  z
    .string()
    .optional()
    .transform((v, ctx): Operator[] => {
      if (v === undefined) return [];
      const operators: Operator[] = [];
      v.split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
        .forEach((entry, i) => {
          const colon = entry.indexOf(':');
          const name = colon < 0 ? '' : entry.slice(0, colon).trim();
          const token = colon < 0 ? '' : entry.slice(colon + 1).trim();
          if (!OPERATOR_NAME.test(name)) {
            ctx.addIssue({ code: 'custom', message: `entry ${i + 1} must be name:token with a lowercase name (letters, digits, . _ @ -)` });
          } else if (token.length < MIN_TOKEN_LENGTH) {
            ctx.addIssue({ code: 'custom', message: `operator "${name}": the token ${TOKEN_RULE}` });
          } else if (operators.some((o) => o.name === name)) {
            ctx.addIssue({ code: 'custom', message: `operator "${name}" is named twice` });
          } else if (operators.some((o) => o.token.reveal() === token)) {
            ctx.addIssue({ code: 'custom', message: `operator "${name}" has the same token as "${operators.find((o) => o.token.reveal() === token)!.name}": each operator needs a token of their own` });
          } else {
            operators.push({ name, token: new Secret(token) });
          }
        });
      return operators;
    }),
);

/** How a 2xx answer to a webhook is backed: docs/configuration.md, "Acknowledgement durability". */
export const ACK_DURABILITY = ['aof', 'replica', 'none'] as const;
export type AckDurability = (typeof ACK_DURABILITY)[number];

const EnvSchema = z.object({
  NODE_ENV: z.preprocess(blankToUndefined, z.enum(['development', 'production', 'test']).default('development')),
  REDIS_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^rediss?:\/\/.+/, { error: 'must be a redis:// or rediss:// URL' })
      .optional(),
  ),
  REDIS_CLUSTER: flag,
  TAXSYNC_PREFIX: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^\{[^{}]+\}$/, { error: 'must be a Redis hash tag such as {taxsync}, so Redis Cluster keeps every key in one slot' })
      .default('{taxsync}'),
  ),
  TAX_API_URL: optionalString,
  TAX_API_AUTH_URL: optionalString,
  TAX_API_CLIENT_ID: optionalString,
  TAX_API_CLIENT_SECRET: secret,
  TAX_API_CONNECT_TIMEOUT_MS: int(1, 600_000, 5_000),
  TAX_API_HEADERS_TIMEOUT_MS: int(1, 600_000, 30_000),
  TAX_API_BODY_TIMEOUT_MS: int(1, 600_000, 30_000),
  TAX_API_TOKEN_RENEW_BEFORE_S: int(0, 86_400, 300),
  VAT_API_URL: optionalString,
  VAT_API_MODULE: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[a-z0-9-]+$/, { error: 'must be a single lowercase path segment such as vat' })
      .default('vat'),
  ),
  TAXSYNC_HTTP_HOST: z.preprocess(blankToUndefined, z.string().default('0.0.0.0')),
  TAXSYNC_HTTP_PORT: int(0, 65_535, 8080),
  TAXSYNC_METRICS_PORT: z.preprocess(
    blankToUndefined,
    z.coerce.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }).min(0, { error: 'must be at least 0' }).max(65_535, { error: 'must be at most 65535' }).optional(),
  ),
  TAXSYNC_ADMIN_TOKEN: longSecret,
  TAXSYNC_ADMIN_TOKENS: operatorList,
  TAXSYNC_ADMIN_LOGIN_MAX_ATTEMPTS: int(1, 10_000, 10),
  TAXSYNC_ADMIN_LOGIN_WINDOW_S: int(1, 86_400, 900),
  TAXSYNC_ADMIN_SESSION_HOURS: int(1, 24 * 30, 12),
  TAXSYNC_ADMIN_INSECURE_COOKIE: flag,
  TAXSYNC_METRICS_TOKEN: longSecret,
  TAXSYNC_ACK_DURABILITY: z.preprocess(
    (v) => (typeof v === 'string' ? blankToUndefined(v.trim().toLowerCase()) : v),
    z.enum(ACK_DURABILITY, { error: `must be one of ${ACK_DURABILITY.join(', ')}` }).default('aof'),
  ),
  TAXSYNC_ACK_TIMEOUT_MS: int(1, 60_000, 1_500),
  TAXSYNC_WEBHOOK_BODY_LIMIT: int(1_024, 64 * 1024 * 1024, 1024 * 1024),
  TAXSYNC_WEBHOOK_TOLERANCE_S: int(1, 86_400, 300),
  TAXSYNC_WEBHOOK_MAX_DEPTH: int(8, 1_000, 64),
  TAXSYNC_WEBHOOK_MAX_BATCH: int(1, 100_000, 1_000),
  TAXSYNC_DELIVERY_TTL_S: int(60, 30 * 86_400, 4 * 86_400),
  TAXSYNC_DLQ_RAW_BODY_LIMIT: int(0, 16 * 1024 * 1024, 64 * 1024),
  TAXSYNC_DLQ_MAX_ENTRIES: int(0, 100_000_000, 0),
  TAXSYNC_DLQ_MAX_AGE_DAYS: int(0, 36_500, 0),
  TAXSYNC_DLQ_ARCHIVE: optionalString,
  TAXSYNC_DLQ_RETENTION_INTERVAL_MS: int(1_000, 86_400_000, 600_000),
  TAXSYNC_COALESCE_MS: int(0, 60_000, DEFAULT_COALESCE_MS),
  TAXSYNC_COALESCE_MAX_MS: int(0, 3_600_000, 5_000),
  TAXSYNC_TRACE_MAX_ENTRIES: int(0, 10_000, 100),
  TAXSYNC_TRACE_MAX_AGE_DAYS: int(1, 3_650, 30),
  // 100 jobs in flight: one process reaches 500+ calls/s against an API answering in 100 ms.
  TAXSYNC_CONCURRENCY_CUSTOMERS: int(1, 1_000, 100),
  TAXSYNC_CONCURRENCY_TRANSACTIONS: int(1, 1_000, 100),
  TAXSYNC_CONCURRENCY_VAT: int(1, 1_000, 10),
  TAXSYNC_VAT_LEASE_MS: int(1_000, 3_600_000, 120_000),
  TAXSYNC_VAT_MAX_ATTEMPTS: int(1, 1_000, 40),
  TAXSYNC_VAT_BACKOFF_BASE_MS: int(1, 3_600_000, 2_000),
  TAXSYNC_VAT_BACKOFF_CAP_MS: int(1, 86_400_000, 3_600_000),
  TAXSYNC_VAT_REFERENCE_TTL_S: int(1, 86_400, 3_600),
  TAXSYNC_VAT_UNKNOWN_LIMIT: int(1, 1_000, 20),
  TAXSYNC_VAT_RESOLVER_INTERVAL_MS: int(1_000, 86_400_000, 60_000),
  TAXSYNC_MAX_ATTEMPTS: int(1, 1_000, 12),
  TAXSYNC_BACKOFF_BASE_MS: int(1, 3_600_000, 1_000),
  TAXSYNC_BACKOFF_CAP_MS: int(1, 86_400_000, 600_000),
  TAXSYNC_WAIT_DEADLINE_S: int(1, 30 * 86_400, 86_400),
  // 30 minutes: see docs/configuration.md for why.
  TAXSYNC_REFUND_WAIT: duration('m', 1_000, 30 * 86_400_000, '30m'),
  TAXSYNC_TAX_VARIANCE_ABS: decimal('0.05'),
  TAXSYNC_SOURCE_SILENCE: duration('m', 60_000, 30 * 86_400_000, '6h'),
  TAXSYNC_TAX_VARIANCE_PCT: decimal('0.5'),
  TAXSYNC_WAIT_BASE_MS: int(1, 3_600_000, 5_000),
  TAXSYNC_WAIT_CAP_MS: int(1, 86_400_000, 1_800_000),
  TAXSYNC_SWEEP_INTERVAL_MS: int(1_000, 3_600_000, 30_000),
  TAXSYNC_STALLED_INTERVAL_MS: int(1_000, 600_000, 30_000),
  TAXSYNC_DATA_DIR: z.preprocess(blankToUndefined, z.string().default('.taxsync')),
  TAXSYNC_SHUTDOWN_DEADLINE_MS: int(1_000, 600_000, 25_000),
  TAXSYNC_CONFIG: optionalString,
  TAXSYNC_CONNECTIONS: optionalString,
  LOG_LEVEL: z.preprocess(
    (v) => (typeof v === 'string' ? blankToUndefined(v.toLowerCase()) : v),
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).optional(),
  ),
  TAXSYNC_ALLOW_INSECURE_HTTP: flag,
});

type Env = z.infer<typeof EnvSchema>;

function buildConfig(env: Env) {
  return {
    nodeEnv: env.NODE_ENV,
    redis: {
      url: env.REDIS_URL,
      /** REDIS_URL names one node of a Redis Cluster (REDIS_CLUSTER=1). */
      cluster: env.REDIS_CLUSTER,
      prefix: env.TAXSYNC_PREFIX,
    },
    taxApi: {
      /** undefined: run against the built-in emulator. */
      url: env.TAX_API_URL,
      authUrl: env.TAX_API_AUTH_URL,
      clientId: env.TAX_API_CLIENT_ID,
      clientSecret: env.TAX_API_CLIENT_SECRET,
      timeouts: {
        connectMs: env.TAX_API_CONNECT_TIMEOUT_MS,
        headersMs: env.TAX_API_HEADERS_TIMEOUT_MS,
        bodyMs: env.TAX_API_BODY_TIMEOUT_MS,
      },
      tokenRenewBeforeMs: env.TAX_API_TOKEN_RENEW_BEFORE_S * 1000,
    },
    vatApi: { url: env.VAT_API_URL ?? env.TAX_API_URL, module: env.VAT_API_MODULE },
    usesEmulator: env.TAX_API_URL === undefined,
    http: { host: env.TAXSYNC_HTTP_HOST, port: env.TAXSYNC_HTTP_PORT },
    /** `taxsync work`'s own /metrics listener (on TAXSYNC_HTTP_HOST); unset: none. */
    metricsPort: env.TAXSYNC_METRICS_PORT,
    webhooks: {
      bodyLimitBytes: env.TAXSYNC_WEBHOOK_BODY_LIMIT,
      toleranceSeconds: env.TAXSYNC_WEBHOOK_TOLERANCE_S,
      deliveryTtlMs: env.TAXSYNC_DELIVERY_TTL_S * 1000,
      rawBodyLimitBytes: env.TAXSYNC_DLQ_RAW_BODY_LIMIT,
      /** Checked on the raw bytes before parsing: deeper or bigger is a 400 (a batch element too deep: refused alone). */
      limits: { maxDepth: env.TAXSYNC_WEBHOOK_MAX_DEPTH, maxBatch: env.TAXSYNC_WEBHOOK_MAX_BATCH },
    },
    queue: {
      coalesceDelayMs: env.TAXSYNC_COALESCE_MS,
      /** A record updated without pause is still sent once its job is this old. */
      coalesceMaxMs: env.TAXSYNC_COALESCE_MAX_MS,
      concurrency: {
        customers: env.TAXSYNC_CONCURRENCY_CUSTOMERS,
        transactions: env.TAXSYNC_CONCURRENCY_TRANSACTIONS,
        'vat-submissions': env.TAXSYNC_CONCURRENCY_VAT,
      },
      vat: {
        leaseMs: env.TAXSYNC_VAT_LEASE_MS,
        referenceTtlMs: env.TAXSYNC_VAT_REFERENCE_TTL_S * 1000,
        /** Resends of an unknown outcome before VAT_OUTCOME_UNRESOLVED. */
        unknownLimit: env.TAXSYNC_VAT_UNKNOWN_LIMIT,
        /** How often a VAT worker looks for open ledger entries whose job is gone. */
        resolverIntervalMs: env.TAXSYNC_VAT_RESOLVER_INTERVAL_MS,
      },
      retry: {
        records: { attempts: env.TAXSYNC_MAX_ATTEMPTS, baseMs: env.TAXSYNC_BACKOFF_BASE_MS, capMs: env.TAXSYNC_BACKOFF_CAP_MS },
        vat: { attempts: env.TAXSYNC_VAT_MAX_ATTEMPTS, baseMs: env.TAXSYNC_VAT_BACKOFF_BASE_MS, capMs: env.TAXSYNC_VAT_BACKOFF_CAP_MS },
      },
      wait: {
        deadlineMs: env.TAXSYNC_WAIT_DEADLINE_S * 1000,
        /** A refund (or its VAT correction) waiting for its original: dead-lettered as REFUND_ORIGINAL_MISSING after this. */
        refundDeadlineMs: env.TAXSYNC_REFUND_WAIT,
        baseMs: env.TAXSYNC_WAIT_BASE_MS,
        capMs: env.TAXSYNC_WAIT_CAP_MS,
      },
      sweepIntervalMs: env.TAXSYNC_SWEEP_INTERVAL_MS,
      stalledIntervalMs: env.TAXSYNC_STALLED_INTERVAL_MS,
    },
    deadLetter: {
      /** Retention (0 = off): entries beyond these are archived to `archivePath`, then removed. */
      maxEntries: env.TAXSYNC_DLQ_MAX_ENTRIES,
      maxAgeDays: env.TAXSYNC_DLQ_MAX_AGE_DAYS,
      archivePath: env.TAXSYNC_DLQ_ARCHIVE ?? join(env.TAXSYNC_DATA_DIR, 'dead-letter-archive.jsonl'),
      /** How often each `work` / `start` process tries to apply retention (when a limit is set). */
      retentionIntervalMs: env.TAXSYNC_DLQ_RETENTION_INTERVAL_MS,
    },
    /** Charged-vs-calculated tax: a variance above both is recorded (docs/operations.md, "Tax variance"). */
    taxVariance: { abs: env.TAXSYNC_TAX_VARIANCE_ABS, pct: env.TAXSYNC_TAX_VARIANCE_PCT },
    /** A source that sent before and has been quiet longer than this is silent (status, web view). */
    sourceSilenceMs: env.TAXSYNC_SOURCE_SILENCE,
    trace: { maxEntries: env.TAXSYNC_TRACE_MAX_ENTRIES, maxAgeMs: env.TAXSYNC_TRACE_MAX_AGE_DAYS * 86_400_000 },
    admin: {
      /** Who may use /admin: TAXSYNC_ADMIN_TOKEN is the operator `admin`, TAXSYNC_ADMIN_TOKENS names the others. None: /admin is off. */
      operators: [...(env.TAXSYNC_ADMIN_TOKEN ? [{ name: 'admin', token: env.TAXSYNC_ADMIN_TOKEN }] : []), ...env.TAXSYNC_ADMIN_TOKENS] as Operator[],
      loginRate: { max: env.TAXSYNC_ADMIN_LOGIN_MAX_ATTEMPTS, windowMs: env.TAXSYNC_ADMIN_LOGIN_WINDOW_S * 1000 },
      sessionMs: env.TAXSYNC_ADMIN_SESSION_HOURS * 3_600_000,
      /** Session cookies without `Secure`: only for a listener on a loopback address (plain http on localhost). */
      secureCookie: !env.TAXSYNC_ADMIN_INSECURE_COOKIE,
    },
    /** Bearer token for /metrics; unset: /metrics answers this host only (docs/operations.md, "Security"). */
    metricsToken: env.TAXSYNC_METRICS_TOKEN,
    /** What a webhook's 2xx waits for besides EXEC (docs/configuration.md, "Acknowledgement durability"). */
    ack: { durability: env.TAXSYNC_ACK_DURABILITY, timeoutMs: env.TAXSYNC_ACK_TIMEOUT_MS },
    configFile: env.TAXSYNC_CONFIG,
    /** The connections file (docs/connections.md); unset: one default connection per platform, from its variables. */
    connectionsFile: env.TAXSYNC_CONNECTIONS,
    /** The daemon's level (`start`, `serve`, `work`); default info. */
    logLevel: env.LOG_LEVEL ?? 'info',
    /** LOG_LEVEL as set, if it is: the other commands log at warn unless it (or --verbose) says otherwise. */
    logLevelSet: env.LOG_LEVEL,
    dataDir: env.TAXSYNC_DATA_DIR,
    shutdownDeadlineMs: env.TAXSYNC_SHUTDOWN_DEADLINE_MS,
    allowInsecureHttp: env.TAXSYNC_ALLOW_INSECURE_HTTP,
  };
}

/**
 * Each connector's webhook secrets (its `secretVariable`, e.g. SHOPIFY_WEBHOOK_SECRET), by id: every
 * registered connector has an entry (empty when unset); a connector given to loadConfig besides
 * them (a test's) is read the same way.
 */
export type WebhookSecrets = { readonly [K in ConnectorId]: readonly Secret[] } & { readonly [id: string]: readonly Secret[] | undefined };

export type Config = DeepReadonly<ReturnType<typeof buildConfig>> & {
  readonly webhookSecrets: WebhookSecrets;
  /** The platforms' own APIs (`taxsync backfill`, a waiting refund's original), from the variables each connector declares. */
  readonly platforms: DeepReadonly<PlatformApis>;
};
type DeepReadonly<T> = T extends Secret ? T : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** The variables the cross-variable rules read, taken leniently so they run even when others are bad. */
interface CrossView {
  NODE_ENV: string | undefined;
  REDIS_URL: string | undefined;
  REDIS_CLUSTER: boolean;
  TAX_API_URL: string | undefined;
  TAX_API_AUTH_URL: string | undefined;
  VAT_API_URL: string | undefined;
  TAX_API_CLIENT_ID: string | undefined;
  TAX_API_CLIENT_SECRET: unknown;
  TAXSYNC_ALLOW_INSECURE_HTTP: boolean;
  TAXSYNC_HTTP_HOST: string | undefined;
  TAXSYNC_ADMIN_TOKEN: string | undefined;
  TAXSYNC_ADMIN_TOKENS: string | undefined;
  TAXSYNC_ADMIN_INSECURE_COOKIE: boolean;
}

function crossView(source: Record<string, string | undefined>): CrossView {
  const get = (name: string) => {
    const value = source[name]?.trim();
    return value === '' ? undefined : value;
  };
  return {
    NODE_ENV: get('NODE_ENV'),
    REDIS_URL: get('REDIS_URL'),
    REDIS_CLUSTER: ['1', 'true'].includes(get('REDIS_CLUSTER') ?? ''),
    TAX_API_URL: get('TAX_API_URL'),
    TAX_API_AUTH_URL: get('TAX_API_AUTH_URL'),
    VAT_API_URL: get('VAT_API_URL'),
    TAX_API_CLIENT_ID: get('TAX_API_CLIENT_ID'),
    TAX_API_CLIENT_SECRET: get('TAX_API_CLIENT_SECRET'),
    TAXSYNC_ALLOW_INSECURE_HTTP: ['1', 'true'].includes(get('TAXSYNC_ALLOW_INSECURE_HTTP') ?? ''),
    TAXSYNC_HTTP_HOST: get('TAXSYNC_HTTP_HOST'),
    TAXSYNC_ADMIN_TOKEN: get('TAXSYNC_ADMIN_TOKEN'),
    TAXSYNC_ADMIN_TOKENS: get('TAXSYNC_ADMIN_TOKENS'),
    TAXSYNC_ADMIN_INSECURE_COOKIE: ['1', 'true'].includes(get('TAXSYNC_ADMIN_INSECURE_COOKIE') ?? ''),
  };
}

/** The variables among `names` holding a URL that credentials may not be sent to (apiUrlProblem). */
function urlProblems(source: Record<string, string | undefined>, names: readonly string[], allowInsecureHttp: boolean): string[] {
  return names.flatMap((name) => {
    const value = source[name]?.trim();
    const problem = value ? apiUrlProblem(value, allowInsecureHttp) : undefined;
    return problem ? [`${name} ${problem}`] : [];
  });
}

/** Rules that span several variables; each problem names its variable. */
function crossFieldProblems(env: CrossView): string[] {
  const problems: string[] = [];
  if (env.REDIS_CLUSTER && env.REDIS_URL === undefined) {
    problems.push('REDIS_CLUSTER is set but REDIS_URL is not: set REDIS_URL to one node of the cluster (the zero-configuration Redis is a single server)');
  }
  for (const name of ['TAX_API_URL', 'TAX_API_AUTH_URL', 'VAT_API_URL'] as const) {
    const value = env[name];
    if (value === undefined) continue;
    const problem = apiUrlProblem(value, env.TAXSYNC_ALLOW_INSECURE_HTTP);
    if (problem) problems.push(`${name} ${problem}`);
  }
  if (env.TAX_API_URL === undefined) {
    if (env.NODE_ENV === 'production') {
      problems.push('TAX_API_URL is required when NODE_ENV=production (unset runs against the built-in emulator)');
    }
    if (env.VAT_API_URL !== undefined) problems.push('VAT_API_URL is set but TAX_API_URL is not: set both, or neither to use the emulator');
  } else {
    if (env.TAX_API_CLIENT_ID === undefined) problems.push('TAX_API_CLIENT_ID is required when TAX_API_URL is set');
    if (env.TAX_API_CLIENT_SECRET === undefined) problems.push('TAX_API_CLIENT_SECRET is required when TAX_API_URL is set');
  }
  if (env.TAXSYNC_ADMIN_TOKEN !== undefined && env.TAXSYNC_ADMIN_TOKENS !== undefined) {
    const token = env.TAXSYNC_ADMIN_TOKEN;
    for (const entry of env.TAXSYNC_ADMIN_TOKENS.split(',')) {
      const colon = entry.indexOf(':');
      const name = entry.slice(0, Math.max(0, colon)).trim();
      if (name === 'admin') problems.push('TAXSYNC_ADMIN_TOKENS names an operator "admin": that name is TAXSYNC_ADMIN_TOKEN\'s');
      if (colon >= 0 && entry.slice(colon + 1).trim() === token) problems.push(`TAXSYNC_ADMIN_TOKENS operator "${name}" has the same token as TAXSYNC_ADMIN_TOKEN: each operator needs a token of their own`);
    }
  }
  if (env.TAXSYNC_ADMIN_INSECURE_COOKIE && !isLoopbackHost(env.TAXSYNC_HTTP_HOST ?? '0.0.0.0')) {
    problems.push('TAXSYNC_ADMIN_INSECURE_COOKIE=1 is only allowed with TAXSYNC_HTTP_HOST on a loopback address (plain http on this host): elsewhere the session cookie must be Secure');
  }
  return problems;
}

/**
 * Parses the environment once. Throws a CONFIG_INVALID TaxsyncError whose message names every bad
 * variable (never its value when the variable holds a secret).
 */
export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  /** Connectors besides the registry's whose variables are read too (a test's own platform). */
  extraConnectors: readonly ConnectorConfig[] = [],
): Config {
  const connectors = [...CONNECTOR_LIST, ...extraConnectors];
  const parsed = EnvSchema.safeParse(source);
  const secrets = connectorSecretsSchema(connectors).safeParse(source);
  const platformApis = connectors.flatMap((c) => (c.platformApi === undefined ? [] : [[c.id, c.platformApi.safeParse(source)] as const]));
  const issues = [parsed, secrets, ...platformApis.map(([, result]) => result)].flatMap((result) => (result.success ? [] : result.error.issues));
  // A platform's URL carries its credentials (a token, a key pair in Basic auth): the same https rule as the services'.
  const platformUrls = connectors.flatMap((c) => (c.platformApi === undefined ? [] : Object.keys(c.platformApi.in.shape).filter((name) => name.endsWith('_URL'))));
  const view = crossView(source);
  const problems = [
    ...issues.map((issue) => describeIssues([issue], { whole: '(environment)', sentence: true })),
    ...crossFieldProblems(view),
    ...urlProblems(source, platformUrls, view.TAXSYNC_ALLOW_INSECURE_HTTP),
  ];
  if (!parsed.success || !secrets.success || problems.length > 0) throw configError(problems);
  // Every registered connector has its entry: the list above starts with CONNECTOR_LIST.
  const webhookSecrets = Object.fromEntries(connectors.map((c) => [c.id, secrets.data[c.secretVariable] ?? []])) as unknown as WebhookSecrets;
  const platforms = Object.fromEntries(platformApis.map(([id, result]) => [id, result.data])) as unknown as PlatformApis;
  return deepFreeze({ ...buildConfig(parsed.data), webhookSecrets, platforms }, (value) => value instanceof Secret);
}

/** The webhook-secret variable of each connector, as its connector declares it. */
function connectorSecretsSchema(connectors: readonly ConnectorConfig[]) {
  return z.object(Object.fromEntries(connectors.map((c) => [c.secretVariable, secretList])));
}

function configError(problems: string[]): TaxsyncError {
  return new TaxsyncError('CONFIG_INVALID', `invalid configuration: ${problems.join('; ')}`, {
    details: { problems },
  });
}

/** A printable view of a configured value (the config, a connection) with every Secret shown as `[redacted]`. */
export function redacted(value: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

/** A printable view of the config with every secret shown only as set or unset. */
export function describeConfig(config: Config): Record<string, unknown> {
  return redacted(config);
}
