import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it: raw url (percent-encoding kept), headers and body. */
export interface RecordedRequest {
  method: string;
  /** The raw request target, e.g. `/v1/customers/shopify/a%2Fb?limit=2`. */
  url: string;
  /** The path part of `url`, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** Epoch milliseconds when the request's headers arrived. */
  startedAt: number;
}

/** Answers one request. Returning without answering leaves the request hanging (until close()). */
export type Handler = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FakeApi {
  /** `http://127.0.0.1:{port}` without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Registers the handler for `"METHOD /exact/path"` (the path without its query). */
  on(route: string, handler: Handler): FakeApi;
  /** Handles whatever no route matches; without one the server answers 404 `{detail}`. */
  fallback(handler: Handler): FakeApi;
  /** The requests received for `"METHOD /path"`. */
  requestsTo(route: string): RecordedRequest[];
  close(): Promise<void>;
}

/** A scriptable node:http server on 127.0.0.1, port 0. */
export async function startFakeApi(): Promise<FakeApi> {
  const routes = new Map<string, Handler>();
  let fallbackHandler: Handler | undefined;
  const requests: RecordedRequest[] = [];

  const server: Server = createServer((raw, res) => {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const url = raw.url ?? '/';
      const queryAt = url.indexOf('?');
      const recorded: RecordedRequest = {
        method: raw.method ?? 'GET',
        url,
        path: queryAt === -1 ? url : url.slice(0, queryAt),
        query: new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1)),
        headers: raw.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        startedAt,
      };
      requests.push(recorded);
      const handler = routes.get(`${recorded.method} ${recorded.path}`) ?? fallbackHandler;
      if (handler === undefined) {
        answerJson(res, 404, { detail: `fake-api: no handler for ${recorded.method} ${recorded.path}` });
        return;
      }
      Promise.resolve(handler(recorded, res, raw)).catch((error: unknown) => {
        if (!res.headersSent) answerJson(res, 500, { detail: `fake-api handler failed: ${String(error)}` });
        else res.destroy();
      });
    });
  });
  // Node's default, stated because it matters: undici drops an idle socket 2 s before the server's
  // keep-alive hint, so clients reuse connections as in production yet never pick one the server is
  // closing. close() ends open sockets itself.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const api: FakeApi = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    on(route, handler) {
      routes.set(route, handler);
      return api;
    },
    fallback(handler) {
      fallbackHandler = handler;
      return api;
    },
    requestsTo(route) {
      return requests.filter((r) => `${r.method} ${r.path}` === route);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return api;
}

/** Answers `body` as JSON (or nothing for undefined) with `status` and extra headers. */
export function answerJson(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A handler that always answers the same JSON. */
export function replyJson(status: number, body?: unknown, headers?: Record<string, string>): Handler {
  return (_req, res) => answerJson(res, status, body, headers);
}

/** A handler that never answers (the client's timeout, or close(), ends the request). */
export const hang: Handler = () => undefined;

/** A handler that drops the connection after the whole request was received. */
export const destroySocket: Handler = (_req, res) => {
  res.socket?.destroy();
};

/** Waits `ms` milliseconds (for handlers that answer late). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The request body parsed as JSON. */
export function jsonBody(req: RecordedRequest): unknown {
  return JSON.parse(req.body) as unknown;
}

/** A port nothing listens on (bound once, then released), for connection-refused tests. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
