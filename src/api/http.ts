import { Agent, request, type Dispatcher } from 'undici';
import { apiUrlProblem } from './url-policy.js';
import { TaxsyncError, type HttpExchange } from '../domain/errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: 5_000, headersMs: 30_000, bodyMs: 30_000 };

/**
 * The most of an answer taxsync reads, in bytes. Far above any documented answer (a page of 100
 * transactions with large breakdowns is a few MB): past it the rest is not read, and the answer
 * counts as unreadable with its status kept (docs/decisions.md, "Reading answers").
 */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** Bodies kept in error exchanges (dead-letter entries) are cut at this many characters. */
export const EXCHANGE_BODY_LIMIT = 4_096;

export interface HttpRequest {
  method: HttpMethod;
  /** A path relative to the base URL, or an absolute URL on the same origin (paging links). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: Record<string, string>;
  bearer?: string;
  /** When false the request body is left out of error exchanges (token requests carry secrets). */
  recordBody?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Parsed JSON, or undefined when the body is empty, not JSON or too large. */
  body: unknown;
  exchange: HttpExchange;
  /** Set (to the limit) when the body was larger than the client reads: `text` is then empty. */
  tooLarge?: number;
}

export interface HttpClientOptions {
  baseUrl: string;
  timeouts?: HttpTimeouts;
  allowInsecureHttp?: boolean;
  /** Tests inject undici's MockAgent here; production builds its own keep-alive Agent. */
  dispatcher?: Dispatcher;
  userAgent?: string;
  /** @defaultValue DEFAULT_MAX_ANSWER_BYTES */
  maxAnswerBytes?: number;
}

export interface HttpClient {
  readonly baseUrl: URL;
  send(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

// Failures before any byte of the request left: safe to retry any method.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'TAXSYNC_DEADLINE']);

/** The reason a request is aborted at its overall deadline. */
class DeadlineError extends Error {
  readonly code = 'TAXSYNC_DEADLINE';
}

export function truncate(text: string, limit = EXCHANGE_BODY_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [truncated ${text.length - limit} characters]`;
}

/** The URL as sent, query included: taxsync never puts secrets in URLs (tokens go in headers). */
function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}${url.search}`;
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const problem = apiUrlProblem(options.baseUrl, options.allowInsecureHttp ?? false);
  if (problem) {
    throw new TaxsyncError('API_INSECURE_URL', `API base URL ${problem}`, { details: { baseUrl: options.baseUrl } });
  }
  const baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  // undici's body timeout is an idle timeout: an answer that trickles in (a byte every few seconds)
  // would hold the call, its job and its record for ever. Nothing takes longer than this in all.
  const deadlineMs = timeouts.connectMs + timeouts.headersMs + timeouts.bodyMs;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Agent({
      connect: { timeout: timeouts.connectMs },
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs,
      keepAliveTimeout: 30_000,
      // Enough for every job a worker process runs at once (100 + 100 + 10 by default).
      connections: 256,
    });

  function resolve(path: string, query: HttpRequest['query']): URL {
    const url = /^https?:\/\//.test(path) ? sameService(new URL(path)) : new URL(path.replace(/^\//, ''), baseUrl);
    if (url.origin !== baseUrl.origin) {
      // A paging link pointing elsewhere would carry our bearer token to a foreign host.
      throw new TaxsyncError('API_BAD_RESPONSE', `refusing to follow a link to another origin (${url.origin})`);
    }
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /**
   * A service behind a proxy that ends TLS writes its own links with http:// (Django REST
   * framework's next links, say): the same host on the default ports is the same service, reached
   * over https. Never the other way: an https base is never left for plain http.
   */
  function sameService(url: URL): URL {
    if (url.protocol !== 'http:' || baseUrl.protocol !== 'https:' || url.hostname !== baseUrl.hostname || url.port !== '' || baseUrl.port !== '') return url;
    return new URL(`${baseUrl.origin}${url.pathname}${url.search}`);
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = resolve(req.path, req.query);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': options.userAgent ?? 'taxsync' };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    }
    if (req.bearer !== undefined) headers.authorization = `Bearer ${req.bearer}`;
    const exchange: HttpExchange = {
      request: {
        method: req.method,
        url: describeUrl(url),
        ...(body !== undefined && req.recordBody !== false ? { body: truncate(body) } : {}),
      },
    };

    let res: Dispatcher.ResponseData;
    let read: { text: string; tooLarge: boolean };
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DeadlineError(`no complete answer within ${deadlineMs} ms`)), deadlineMs);
    try {
      res = await request(url, {
        method: req.method,
        headers,
        body,
        dispatcher,
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.bodyMs,
        signal: deadline.signal,
      });
      read = await readBody(res.body, maxAnswerBytes);
    } catch (cause) {
      throw networkError(deadline.signal.aborted ? deadline.signal.reason : cause, req.method, url, exchange);
    } finally {
      clearTimeout(timer);
    }
    const responseHeaders = flattenHeaders(res.headers);
    const text = read.text;
    exchange.response = {
      status: res.statusCode,
      body: read.tooLarge ? `[not read: larger than ${maxAnswerBytes} bytes]` : truncate(text),
      headers: pickHeaders(responseHeaders, ['content-type', 'retry-after', 'x-request-id', 'location', 'www-authenticate']),
    };
    return {
      status: res.statusCode,
      headers: responseHeaders,
      text,
      body: read.tooLarge ? undefined : parseJson(text),
      exchange,
      ...(read.tooLarge ? { tooLarge: maxAnswerBytes } : {}),
    };
  }

  return {
    baseUrl,
    send,
    close: async () => {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

function networkError(cause: unknown, method: string, url: URL, exchange: HttpExchange): TaxsyncError {
  if (cause instanceof TaxsyncError) return cause;
  const code = (cause as { code?: unknown }).code;
  const codeText = typeof code === 'string' ? code : 'UNKNOWN';
  const ambiguous = !NOT_SENT_CODES.has(codeText);
  const notSent = !ambiguous;
  const where = `${method} ${url.pathname}`;
  if (TIMEOUT_CODES.has(codeText)) {
    return new TaxsyncError('API_TIMEOUT', `${where} timed out (${codeText})`, { cause, ambiguous, notSent, http: exchange });
  }
  return new TaxsyncError('API_NETWORK', `${where} failed: ${codeText}`, { cause, ambiguous, notSent, http: exchange });
}

/** The body as UTF-8 text, or nothing when it runs past `max` bytes (the rest is not read). */
async function readBody(body: Dispatcher.ResponseData['body'], max: number): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return { text: '', tooLarge: true };
    }
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks, size).toString('utf8'), tooLarge: false };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function pickHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) if (headers[name] !== undefined) out[name] = headers[name];
  return out;
}

/** The body as JSON whatever the content-type says; a leading byte-order mark (some Windows stacks send one) is skipped. */
function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
  } catch {
    return undefined;
  }
}
