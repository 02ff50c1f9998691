/**
 * The one registry of taxsync's error codes. Code branches on `code`, never on message text.
 * docs/errors.md lists every code with the operator's action; test/unit/errors-doc.test.ts keeps
 * the two in sync.
 */

/** How a failure is handled (DESIGN.md, "Errors and retries"). */
export type ErrorClass =
  | 'transient'
  | 'rate_limited'
  | 'auth'
  | 'permission'
  | 'invalid'
  | 'not_found'
  | 'conflict'
  | 'waiting'
  | 'config'
  | 'internal';

export interface ErrorCodeInfo {
  readonly errorClass: ErrorClass;
  /** Whether trying again later can succeed without anyone changing anything. */
  readonly retryable: boolean;
}

export const ERROR_CODES = {
  CONFIG_INVALID: { errorClass: 'config', retryable: false },
  API_NETWORK: { errorClass: 'transient', retryable: true },
  API_TIMEOUT: { errorClass: 'transient', retryable: true },
  API_SERVER_ERROR: { errorClass: 'transient', retryable: true },
  API_RATE_LIMITED: { errorClass: 'rate_limited', retryable: true },
  API_UNAUTHORIZED: { errorClass: 'auth', retryable: false },
  API_AUTH_FAILED: { errorClass: 'auth', retryable: false },
  API_FORBIDDEN: { errorClass: 'permission', retryable: false },
  API_INVALID: { errorClass: 'invalid', retryable: false },
  API_NOT_FOUND: { errorClass: 'not_found', retryable: false },
  API_UNEXPECTED_STATUS: { errorClass: 'invalid', retryable: false },
  API_BAD_RESPONSE: { errorClass: 'invalid', retryable: false },
  API_FOREIGN_ANSWER: { errorClass: 'transient', retryable: true },
  API_INSECURE_URL: { errorClass: 'config', retryable: false },
  LISTEN_FAILED: { errorClass: 'config', retryable: false },
  REQUEST_INVALID: { errorClass: 'invalid', retryable: false },
  VAT_DUPLICATE: { errorClass: 'conflict', retryable: false },
  REDIS_UNAVAILABLE: { errorClass: 'transient', retryable: true },
  REDIS_NOT_DURABLE: { errorClass: 'transient', retryable: true },
  INVALID_PAYLOAD: { errorClass: 'invalid', retryable: false },
  MAPPING_INVALID: { errorClass: 'invalid', retryable: false },
  WAITING_EXPIRED: { errorClass: 'waiting', retryable: false },
  REFUND_ORIGINAL_MISSING: { errorClass: 'waiting', retryable: false },
  ORIGINAL_NOT_ON_PLATFORM: { errorClass: 'not_found', retryable: false },
  ORIGINAL_FETCH_FAILED: { errorClass: 'transient', retryable: false },
  JOB_INVALID: { errorClass: 'invalid', retryable: false },
  INTERNAL_ERROR: { errorClass: 'internal', retryable: true },
  RECORD_BUSY: { errorClass: 'transient', retryable: true },
  OAUTH_GRANT_REVOKED: { errorClass: 'auth', retryable: false },
  OAUTH_REFRESH_FAILED: { errorClass: 'transient', retryable: true },
  VAT_CORRECTION_REQUIRED: { errorClass: 'invalid', retryable: false },
  VAT_NUMBER_COLLISION: { errorClass: 'conflict', retryable: false },
  VAT_OUTCOME_UNRESOLVED: { errorClass: 'waiting', retryable: false },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Field errors in the VAT service's shape: field name → messages. */
export type FieldErrors = Record<string, string[]>;

export interface TaxsyncErrorOptions {
  cause?: unknown;
  /** Overrides the code's default retry decision (for example a 401 already renewed once). */
  retryable?: boolean;
  /** A server-given wait before the next attempt (Retry-After). */
  retryAfterMs?: number;
  fields?: FieldErrors;
  /** HTTP status when the error came from a response. */
  status?: number;
  /** Extra context that is safe to log: never secrets. */
  details?: Record<string, unknown>;
  /** The last HTTP exchange, secrets removed and bodies truncated (for dead-letter entries). */
  http?: HttpExchange;
  /**
   * True when a request may have reached the server although no answer came back (reset after
   * sending, timeout waiting for the answer). Non-idempotent calls must treat this as "maybe done".
   */
  ambiguous?: boolean;
  /**
   * True when the request certainly never left (its token could not be fetched, the connection
   * was refused, the body failed its schema): even a non-idempotent call was not made. The
   * status, fields and exchange then describe what failed first (the token endpoint's answer),
   * never an answer to the call itself: a 2xx status here is no acceptance.
   */
  notSent?: boolean;
}

/** One request and its answer as an operator may see them: no secrets, bodies truncated. */
export interface HttpExchange {
  request: { method: string; url: string; body?: string };
  response?: { status: number; body?: string; headers?: Record<string, string> };
}

export class TaxsyncError extends Error {
  override readonly name = 'TaxsyncError';
  readonly code: ErrorCode;
  readonly errorClass: ErrorClass;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly fields: FieldErrors | undefined;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly http: HttpExchange | undefined;
  readonly ambiguous: boolean;
  readonly notSent: boolean;

  constructor(code: ErrorCode, message: string, options: TaxsyncErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.errorClass = ERROR_CODES[code].errorClass;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.fields = options.fields;
    this.status = options.status;
    this.details = options.details;
    this.http = options.http;
    this.ambiguous = options.ambiguous ?? false;
    this.notSent = options.notSent ?? false;
  }

  /** A plain object for logs, job data and dead-letter entries. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      errorClass: this.errorClass,
      retryable: this.retryable,
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
      ...(this.fields === undefined ? {} : { fields: this.fields }),
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.ambiguous ? { ambiguous: true } : {}),
      ...(this.notSent ? { notSent: true } : {}),
      ...(this.http === undefined ? {} : { http: this.http }),
    };
  }
}

/** Checks by class or by name, so errors from another copy of this module still match. */
export function isTaxsyncError(error: unknown): error is TaxsyncError {
  return (
    error instanceof TaxsyncError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'TaxsyncError' &&
      typeof (error as { code?: unknown }).code === 'string')
  );
}

export function hasCode(error: unknown, code: ErrorCode): error is TaxsyncError {
  return isTaxsyncError(error) && error.code === code;
}
