import { request } from 'undici';
import { parseRetryAfter } from '../api/errors.js';

/** A platform answered something other than 200 (after waiting out its 429s): its status, for the caller to tell a 404 apart. */
export class PlatformHttpError extends Error {
  override readonly name = 'PlatformHttpError';
  constructor(
    readonly platform: string,
    readonly status: number,
    readonly path: string,
  ) {
    super(`${platform} answered ${status} to GET ${path}`);
  }
}

export interface PlatformGetOptions {
  platform: string;
  headers: Record<string, string>;
  sleep: (ms: number) => Promise<void>;
  /** Runs before every call (a rate-limit pause). */
  before?: () => Promise<void>;
  after?: (headers: Record<string, string | string[] | undefined>) => void;
  /** How many 429s are waited out before the call fails. @defaultValue 5 */
  rateLimitRetries?: number;
  /** A 429 asking for a longer wait than this fails at once instead. @defaultValue no limit */
  maxRetryWaitMs?: number;
  /** Headers and body timeouts of each call. @defaultValue undici's (300 s) */
  timeoutMs?: number;
}

/**
 * One GET of a platform's API (a list page for `taxsync backfill`, one object for a waiting
 * refund's original): a 429 is waited out (Retry-After seconds when given, else one second,
 * doubling) up to `rateLimitRetries` times; any other answer but 200 throws a PlatformHttpError
 * naming the platform, the status and the path (never the query or a credential).
 */
export async function platformGet(url: URL, options: PlatformGetOptions): Promise<{ body: unknown; headers: Record<string, string | string[] | undefined> }> {
  const retries = options.rateLimitRetries ?? 5;
  const timeouts = options.timeoutMs === undefined ? {} : { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs };
  for (let attempt = 0; ; attempt += 1) {
    await options.before?.();
    const res = await request(url, { method: 'GET', headers: options.headers, ...timeouts });
    options.after?.(res.headers);
    // Seconds or an HTTP date, read as the API client reads it; none (or 0): back off by doubling.
    const header = res.headers['retry-after'];
    const after = parseRetryAfter(Array.isArray(header) ? header[0] : header);
    const waitMs = after !== undefined && after > 0 ? after : 1000 * 2 ** attempt;
    if (res.statusCode === 429 && attempt < retries && waitMs <= (options.maxRetryWaitMs ?? Infinity)) {
      await res.body.dump();
      await options.sleep(waitMs);
      continue;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new PlatformHttpError(options.platform, res.statusCode, url.pathname);
    }
    return { body: await res.body.json(), headers: res.headers };
  }
}
