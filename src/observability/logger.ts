import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import pinoPretty from 'pino-pretty';

export type { Logger } from 'pino';

/** Keys whose values are secrets wherever they appear (DESIGN.md invariant 7). */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'token',
  'secret',
  'secrets',
  'webhookSecret',
  'adminToken',
  'password',
  'signature',
  'x-shopify-hmac-sha256',
  'stripe-signature',
  'x-wc-webhook-signature',
  'webhook-signature',
  'cookie',
  'set-cookie',
];

/** pino's wildcards match one level each, so every key is listed at the depths taxsync logs. */
export const REDACT_PATHS: string[] = ['', '*.', '*.*.', '*.*.*.'].flatMap((depth) =>
  SECRET_KEYS.map((key) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${depth}${key}` : `${depth}["${key}"]`)),
);

/**
 * What of an error may reach a log line. Errors of dependencies carry customer data in their own
 * properties: ioredis puts every argument of the failed command in `command.args` (the event JSON
 * of a webhook when Redis answers OOM) and the errors of a refused transaction in
 * `previousErrors`; undici's response errors carry the body; taxsync's API errors the HTTP
 * exchange. So an error is logged from an allowlist, never by copying its properties, and its
 * message is cleared of the payload snippets parsers put in them. The dead-letter queue keeps what
 * an operator needs to see of the payload; logs never do.
 */
const SAFE_ERROR_FIELDS = ['code', 'errorClass', 'retryable', 'status', 'statusCode', 'errno', 'syscall', 'ambiguous', 'retryAfterMs'] as const;
const MAX_CAUSES = 5;

/** A message without the parts that can be payload. */
export function scrubMessage(message: string): string {
  return (
    message
      // V8's JSON.parse: `Unexpected token 'x', "…the input…" is not valid JSON`.
      .replace(/"[^]*"(?:\.\.\.)?(?= is not valid JSON)/, '"[input omitted]"')
      // The service's text after "<METHOD> <path> answered <status>" (kept in the dead-letter entry).
      .replace(/^((?:GET|PUT|POST|PATCH|DELETE) \S+ answered \d{3}(?: \([^)]*\))?)[:(].*$/s, '$1 (service text omitted from logs: see the dead-letter entry or taxsync trace)')
      .slice(0, 500)
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The `err` of a log line: type, scrubbed message, safe fields, the command name, the causes. */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!isObject(value)) return typeof value === 'string' ? scrubMessage(value) : value;
  const out: Record<string, unknown> = {};
  const type = value instanceof Error ? value.constructor.name : typeof value.name === 'string' ? value.name : 'Object';
  out.type = type;
  const message = typeof value.message === 'string' ? scrubMessage(value.message) : undefined;
  if (message !== undefined) out.message = message;
  for (const key of SAFE_ERROR_FIELDS) {
    const field = value[key];
    if (typeof field === 'string' || typeof field === 'number' || typeof field === 'boolean') out[key] = typeof field === 'string' ? field.slice(0, 100) : field;
  }
  // ioredis: which command failed, never its arguments.
  if (isObject(value.command) && typeof value.command.name === 'string') out.command = value.command.name;
  if (Array.isArray(value.previousErrors)) out.previous = value.previousErrors.slice(0, 5).map((e) => (isObject(e) && typeof e.message === 'string' ? scrubMessage(e.message) : 'error'));
  if (Array.isArray(value.errors)) out.errors = value.errors.slice(0, 5).map((e) => serializeError(e, depth + 1));
  if (typeof value.stack === 'string') {
    const frames = value.stack.split('\n').filter((line) => /^\s+at /.test(line));
    out.stack = [`${type}: ${message ?? ''}`, ...frames].join('\n');
  }
  if (value.cause !== undefined && depth < MAX_CAUSES) out.cause = serializeError(value.cause, depth + 1);
  return out;
}

export interface LoggerOptions {
  level: LevelWithSilent;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
  /**
   * Human-readable lines (pino-pretty) instead of JSON: the CLI's logs on a terminal's stderr.
   * Written synchronously, so a command that exits right after logging loses nothing.
   * @defaultValue false
   */
  pretty?: boolean;
}

/** pino-pretty on file descriptor 2 (stderr), or on `destination` when one is given. */
function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  return pinoPretty({
    sync: true,
    colorize: destination === undefined && process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'service,process',
    ...(destination === undefined ? { destination: 2 } : { destination: destination as NodeJS.WritableStream }),
  });
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'taxsync', ...options.base },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: (value: unknown) => serializeError(value), error: (value: unknown) => serializeError(value) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.pretty ? prettyStream(options.destination) : options.destination,
  );
}
