import { TaxsyncError } from '../domain/errors.js';
import type { Secret } from '../domain/secret.js';
import type { DriftObserver } from './drift.js';
import { errorFromResponse } from './errors.js';
import type { HttpClient } from './http.js';
import { observeCall, type ApiCallObserver } from './observe.js';
import { TokenAnswer } from './schemas/tax-answers.js';
import { TokenResponseA, TokenResponseB } from './schemas/tax-engine.js';
import { readAnswer } from './parse.js';

/** The lifetime the tax document states (24 h), assumed when an answer says none readably; a 401 renews earlier. */
export const DOCUMENTED_TOKEN_LIFETIME_MS = 24 * 3600_000;

export interface Token {
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface Credentials {
  clientId: string;
  clientSecret: Secret;
}

export type Clock = () => number;

/**
 * Fetches a token from variant A (`POST {auth_url}/oauth/token`, form-encoded) when `authHttp` is
 * given, else from variant B (`POST /v1/auth/token`, JSON — the document does not show the
 * encoding; docs/decisions.md).
 */
export function createTokenFetcher(options: {
  http: HttpClient;
  authHttp?: HttpClient;
  credentials: Credentials;
  clock?: Clock;
  onCall?: ApiCallObserver;
  onDrift?: DriftObserver;
}): () => Promise<Token> {
  const clock = options.clock ?? Date.now;
  return async () => {
    const { clientId, clientSecret } = options.credentials;
    const variantA = options.authHttp !== undefined;
    const http = options.authHttp ?? options.http;
    const endpoint = variantA ? 'POST /oauth/token' : 'POST /v1/auth/token';
    const started = clock();
    const res = await observeCall(options.onCall, { service: 'auth', endpoint }, () =>
      variantA
        ? http.send({
            method: 'POST',
            path: 'oauth/token',
            form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret.reveal() },
            recordBody: false,
          })
        : http.send({
            method: 'POST',
            path: 'v1/auth/token',
            json: { client_id: clientId, client_secret: clientSecret.reveal() },
            recordBody: false,
          }),
    );
    if (res.status < 200 || res.status >= 300) {
      const error = errorFromResponse(res, { endpoint });
      if (res.status === 400 || res.status === 401 || res.status === 403) {
        throw new TaxsyncError('API_AUTH_FAILED', `${endpoint} refused the client credentials (status ${res.status})`, {
          status: res.status,
          cause: error,
        });
      }
      throw error;
    }
    // A 2xx token body carries the access token: keep it out of the exchange an error records.
    const response = res.exchange.response && { ...res.exchange.response, body: '[withheld: token response]' };
    const withheld = { ...res, exchange: { ...res.exchange, response } };
    const body = readAnswer({ answer: TokenAnswer, contract: variantA ? TokenResponseA : TokenResponseB }, withheld, { endpoint, onDrift: options.onDrift });
    if (body.token_type !== undefined && !/^bearer$/i.test(body.token_type.trim())) {
      // taxsync sends tokens only as Bearer: a token of another scheme would be sent as what it is not.
      throw new TaxsyncError('API_BAD_RESPONSE', `${endpoint} answered ${res.status} with a token_type other than Bearer (taxsync sends Bearer tokens only)`, {
        status: res.status,
        fields: { token_type: ['expected "Bearer"'] },
        http: withheld.exchange,
      });
    }
    // The earlier of the two, so we never hold a token past either; an expire_at that is not in
    // the future is the service's clock disagreeing with ours, so expires_in (relative) decides.
    const expireAt = body.expire_at === undefined ? NaN : Date.parse(body.expire_at);
    const byExpireAt = !Number.isNaN(expireAt) && expireAt > started ? expireAt : undefined;
    // expires_in 0 gives no lifetime (some services write 0 for "does not expire"): read as absent,
    // or every call would fetch a token of its own; a token revoked early is renewed on its 401.
    const byLifetime = body.expires_in === undefined || body.expires_in <= 0 ? undefined : started + body.expires_in * 1000;
    const expiresAt =
      byLifetime !== undefined && byExpireAt !== undefined
        ? Math.min(byLifetime, byExpireAt)
        : (byLifetime ?? byExpireAt ?? started + DOCUMENTED_TOKEN_LIFETIME_MS);
    return { accessToken: body.access_token, expiresAt };
  };
}

export interface TokenManager {
  /** A valid token, fetched at most once at a time however many callers ask. */
  get(): Promise<string>;
  /** Forgets `token` if it is still the current one (after a 401), so the next get() renews. */
  invalidate(token: string): void;
}

/** After an early renewal failed, the still-valid token is used this long before the endpoint is asked again. */
export const RENEW_RETRY_MS = 10_000;

export function createTokenManager(options: {
  fetch: () => Promise<Token>;
  /** Renew this long before expiry (default 5 minutes; capped at half the token's lifetime). */
  renewBeforeMs?: number;
  clock?: Clock;
}): TokenManager {
  const clock = options.clock ?? Date.now;
  const renewBeforeMs = options.renewBeforeMs ?? 300_000;
  let current: (Token & { renewAt: number }) | undefined;
  let inFlight: Promise<string> | undefined;

  function renew(): Promise<string> {
    inFlight ??= (async () => {
      try {
        const fetchedAt = clock();
        const token = await options.fetch();
        const lifetime = Math.max(0, token.expiresAt - fetchedAt);
        current = { ...token, renewAt: token.expiresAt - Math.min(renewBeforeMs, lifetime / 2) };
        return token.accessToken;
      } catch (error) {
        // An early renewal that fails leaves a token with minutes to live: calls go on with it, and
        // the endpoint is asked again after a pause (not by every call: a failing token endpoint
        // would be asked back to back). Once the token has expired, the failure is the call's.
        const held = current;
        if (held === undefined || clock() >= held.expiresAt) throw error;
        held.renewAt = Math.min(held.expiresAt, clock() + RENEW_RETRY_MS);
        return held.accessToken;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  }

  return {
    get: () => (current !== undefined && clock() < current.renewAt ? Promise.resolve(current.accessToken) : renew()),
    invalidate: (token) => {
      if (current?.accessToken === token) current = undefined;
    },
  };
}
