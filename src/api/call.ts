import type { z } from 'zod';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import type { DriftObserver } from './drift.js';
import { errorFromResponse } from './errors.js';
import type { HttpClient, HttpRequest, HttpResponse } from './http.js';
import { observeCall, type ApiCall, type ApiCallObserver } from './observe.js';
import { readAnswer, type AnswerSchemas } from './parse.js';
import type { TokenManager } from './token.js';

export interface AuthedCaller {
  /** Sends with a bearer token; a 401 renews the token and retries (at most MAX_RENEWALS times). Non-2xx throws. */
  send(req: Omit<HttpRequest, 'bearer'>, options: { endpoint: string; vatSubmission?: boolean }): Promise<HttpResponse>;
  /** send() plus reading the answer: what taxsync needs from it, the rest compared with the contract (drift). */
  json<S extends z.ZodType>(
    req: Omit<HttpRequest, 'bearer'>,
    schemas: AnswerSchemas<S>,
    options: { endpoint: string; vatSubmission?: boolean; /** A POST that changes nothing (verify). */ readOnly?: boolean },
  ): Promise<{ data: z.infer<S>; status: number; /** The URL as sent (a page's, to resolve its links against). */ url: string }>;
}

/**
 * Fresh tokens tried after a 401 before it counts as persistent (API_UNAUTHORIZED). More than one:
 * a service that revokes tokens (credential rotation, forced expiry) can revoke the renewed one
 * too while many calls share it. Credentials that are wrong fail at the token endpoint instead.
 */
export const MAX_RENEWALS = 2;

export function createAuthedCaller(
  http: HttpClient,
  tokens: TokenManager,
  observe: { service?: ApiCall['service']; onCall?: ApiCallObserver; onDrift?: DriftObserver } = {},
): AuthedCaller {
  const service = observe.service ?? 'tax';
  async function send(
    req: Omit<HttpRequest, 'bearer'>,
    options: { endpoint: string; vatSubmission?: boolean },
  ): Promise<HttpResponse> {
    const tokenFor = () => tokens.get().catch((error: unknown) => Promise.reject(notSent(error, options.endpoint)));
    let token = await tokenFor();
    const sendOnce = (bearer: string) => observeCall(observe.onCall, { service, endpoint: options.endpoint }, () => http.send({ ...req, bearer }));
    let res = await sendOnce(token);
    for (let renewals = 0; tokenRefused(res) && renewals < MAX_RENEWALS; renewals++) {
      // A token revoked or expired early: renew (once for all callers holding it) and retry.
      tokens.invalidate(token);
      token = await tokenFor();
      res = await sendOnce(token);
    }
    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res, options);
    }
    return res;
  }

  return {
    send,
    async json(req, schemas, options) {
      const res = await send(req, options);
      const write = req.method !== 'GET' && options.readOnly !== true;
      return { data: readAnswer(schemas, res, { endpoint: options.endpoint, write, onDrift: observe.onDrift }), status: res.status, url: res.exchange.request.url };
    },
  };
}

/**
 * A 401, or a 403 whose challenge says the token itself is the problem (RFC 6750 §3.1
 * `error="invalid_token"`): some gateways refuse an expired token with 403. A 403 without that
 * challenge (or with `insufficient_scope`) is a missing permission, which a new token cannot fix.
 */
function tokenRefused(res: HttpResponse): boolean {
  if (res.status === 401) return true;
  return res.status === 403 && /\berror\s*=\s*"?invalid_token\b/i.test(res.headers['www-authenticate'] ?? '');
}

/**
 * A failure to get a token, as the failure of the call that needed it: that call was not sent
 * (the only request it may have made was refused 401, so not processed). The token endpoint's
 * status stays on the error, but `notSent` says it is not the call's answer: a 2xx there is not
 * the write accepted, a 5xx or timeout there is not the write maybe applied.
 */
function notSent(error: unknown, endpoint: string): TaxsyncError {
  if (!isTaxsyncError(error)) {
    return new TaxsyncError('INTERNAL_ERROR', `${endpoint} was not sent: getting a token failed: ${(error as Error)?.message ?? String(error)}`, {
      cause: error,
      notSent: true,
    });
  }
  return new TaxsyncError(error.code, `${endpoint} was not sent, no token: ${error.message}`, {
    cause: error,
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.fields === undefined ? {} : { fields: error.fields }),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(error.http === undefined ? {} : { http: error.http }),
    ambiguous: false,
    notSent: true,
  });
}
