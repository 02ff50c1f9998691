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
      serializers: { err: pino.stdSerializers.err },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.pretty ? prettyStream(options.destination) : options.destination,
  );
}
