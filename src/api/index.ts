import type { Dispatcher } from 'undici';
import type { Secret } from '../domain/secret.js';
import { createAuthedCaller } from './call.js';
import type { DriftObserver } from './drift.js';
import { createHttpClient, type HttpTimeouts } from './http.js';
import type { ApiCallObserver } from './observe.js';
import { createTaxClient, type TaxClient } from './tax-client.js';
import { createTokenFetcher, createTokenManager, type Clock, type TokenManager } from './token.js';
import { createVatClient, type VatClient } from './vat-client.js';

export * from './schemas/index.js';
export { ENDPOINTS, endpointLabel, endpointPath, type EndpointName } from './endpoints.js';
export type { TaxClient, RecordResource, Page, PageOptions, IterateOptions } from './tax-client.js';
export type { VatClient, VatSubmission } from './vat-client.js';
export type { TokenManager } from './token.js';
export type { ApiCall, ApiCallObserver } from './observe.js';
export { createDriftReporter, detectDrift, type Drift, type DriftFinding, type DriftKind, type DriftObserver } from './drift.js';
export { acceptedUnreadable } from './parse.js';

export interface ApiClientsOptions {
  taxUrl: string;
  /** Defaults to taxUrl. */
  vatUrl?: string;
  /** Set to use token variant A (`POST {authUrl}/oauth/token`). */
  authUrl?: string;
  clientId: string;
  clientSecret: Secret;
  vatModule?: string;
  timeouts?: HttpTimeouts;
  /** The most of an answer read, in bytes (DEFAULT_MAX_ANSWER_BYTES). */
  maxAnswerBytes?: number;
  tokenRenewBeforeMs?: number;
  allowInsecureHttp?: boolean;
  dispatcher?: Dispatcher;
  clock?: Clock;
  /** Told of every request (metrics); src/api itself knows nothing of prom-client. */
  onCall?: ApiCallObserver;
  /**
   * Told of every way a 2xx answer differs from the contract (createDriftReporter logs each shape
   * once and counts). Without it answers are not compared, only read.
   */
  onDrift?: DriftObserver;
}

export interface ApiClients {
  tax: TaxClient;
  vat: VatClient;
  /** One token serves both services (docs/decisions.md). */
  tokens: TokenManager;
  close(): Promise<void>;
}

/** Builds both clients over one token manager. Nothing connects until the first call. */
export function createApiClients(options: ApiClientsOptions): ApiClients {
  const common = { timeouts: options.timeouts, allowInsecureHttp: options.allowInsecureHttp, dispatcher: options.dispatcher, maxAnswerBytes: options.maxAnswerBytes };
  const taxHttp = createHttpClient({ baseUrl: options.taxUrl, ...common });
  const vatHttp = options.vatUrl === undefined || options.vatUrl === options.taxUrl ? taxHttp : createHttpClient({ baseUrl: options.vatUrl, ...common });
  const authHttp = options.authUrl === undefined ? undefined : createHttpClient({ baseUrl: options.authUrl, ...common });
  const tokens = createTokenManager({
    fetch: createTokenFetcher({
      http: taxHttp,
      authHttp,
      credentials: { clientId: options.clientId, clientSecret: options.clientSecret },
      clock: options.clock,
      onCall: options.onCall,
      onDrift: options.onDrift,
    }),
    renewBeforeMs: options.tokenRenewBeforeMs,
    clock: options.clock,
  });
  return {
    tax: createTaxClient(createAuthedCaller(taxHttp, tokens, { service: 'tax', onCall: options.onCall, onDrift: options.onDrift })),
    vat: createVatClient(createAuthedCaller(vatHttp, tokens, { service: 'vat', onCall: options.onCall, onDrift: options.onDrift }), {
      module: options.vatModule ?? 'vat',
    }),
    tokens,
    async close() {
      const owned = new Set([taxHttp, vatHttp, ...(authHttp ? [authHttp] : [])]);
      await Promise.all([...owned].map((http) => http.close()));
    },
  };
}
