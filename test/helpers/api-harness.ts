import { afterEach, beforeEach } from 'vitest';
import { createApiClients, type ApiClients, type ApiClientsOptions } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import { isTaxsyncError, type TaxsyncError } from '../../src/domain/errors.js';
import { answerJson, startFakeApi, type FakeApi, type Handler, type RecordedRequest } from './fake-api.js';

export const CLIENT_ID = 'taxsync-test-client';
/** Distinctive, so a leak into any message, JSON or exchange is easy to find. */
export const CLIENT_SECRET = 'cl1ent-s3cret-NEVER-PRINT';

export interface TokenIssuer {
  /** Access tokens handed out, in order. */
  readonly issued: string[];
  /** The token endpoint's handler (already registered when made by issueTokens). */
  readonly handler: Handler;
}

export interface IssueOptions {
  /** Default `POST /v1/auth/token` (variant B). */
  route?: string;
  /** Lifetime in seconds; default 24 h. */
  expiresIn?: number;
  /** Variant B's expire_at, computed per issue. */
  expireAt?: () => string;
  /** Answer this many milliseconds late (concurrency tests). */
  delayMs?: number;
}

/** Registers a token endpoint that hands out `access-<n>-<port>` tokens. */
export function issueTokens(api: FakeApi, options: IssueOptions = {}): TokenIssuer {
  const issued: string[] = [];
  const handler: Handler = async (_req, res) => {
    if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    const token = `access-${issued.length + 1}-${api.port}`;
    issued.push(token);
    answerJson(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: options.expiresIn ?? 86_400,
      ...(options.expireAt === undefined ? {} : { expire_at: options.expireAt() }),
    });
  };
  api.on(options.route ?? 'POST /v1/auth/token', handler);
  return { issued, handler };
}

/** The bearer token of a recorded request, or undefined. */
export function bearerOf(req: RecordedRequest): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

/** Wraps a handler so it answers 401 unless the request carries a token `accept` allows. */
export function requireBearer(accept: (token: string) => boolean, handler: Handler): Handler {
  return (req, res, raw) => {
    const token = bearerOf(req);
    if (token === undefined || !accept(token)) {
      answerJson(res, 401, { error: 'invalid or missing token', details: {} });
      return;
    }
    return handler(req, res, raw);
  };
}

export interface ApiTestContext {
  /** A fresh fake server per test, with a variant-B token endpoint registered. */
  api: FakeApi;
  tokens: TokenIssuer;
  /** Builds clients against `api` (overridable); they are closed after the test. */
  connect(overrides?: Partial<ApiClientsOptions>): ApiClients;
  /** Another fake server (an auth server, a foreign origin), closed after the test. */
  server(): Promise<FakeApi>;
}

/** Per-test fake server and clients, torn down after each test. */
export function useFakeApi(): ApiTestContext {
  const clients: ApiClients[] = [];
  const servers: FakeApi[] = [];
  const ctx: ApiTestContext = {
    api: undefined as unknown as FakeApi,
    tokens: undefined as unknown as TokenIssuer,
    connect(overrides = {}) {
      const made = createApiClients({
        taxUrl: ctx.api.url,
        clientId: CLIENT_ID,
        clientSecret: new Secret(CLIENT_SECRET),
        ...overrides,
      });
      clients.push(made);
      return made;
    },
    async server() {
      const extra = await startFakeApi();
      servers.push(extra);
      return extra;
    },
  };
  beforeEach(async () => {
    ctx.api = await startFakeApi();
    servers.push(ctx.api);
    ctx.tokens = issueTokens(ctx.api);
  });
  afterEach(async () => {
    // Servers first: closing them ends any request a test left hanging, so the clients close at once.
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  return ctx;
}

/** The TaxsyncError `promise` rejects with; anything else (success, another error) fails the test. */
export async function apiError(promise: Promise<unknown>): Promise<TaxsyncError> {
  try {
    await promise;
  } catch (error) {
    if (isTaxsyncError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
