import type { z } from 'zod';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import type { DriftObserver } from './drift.js';
import { errorFromResponse, isForeignAnswer } from './errors.js';
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

/**
 * A token that could not be fetched means the call itself never left. The token endpoint's failure
 * keeps its code, retry decision, wait, status and exchange (what the operator needs) and is marked
 * `notSent`, without its ambiguity: the status and the ambiguity describe the token request, and
 * read as the call's they would make a non-idempotent write (a VAT submission) look accepted (a 2xx
 * token answer taxsync cannot read) or possibly landed (a token request that timed out) when it was
 * never sent.
 */
export function tokenFailure(error: unknown, endpoint: string): TaxsyncError {
  const cause = isTaxsyncError(error)
    ? error
    : new TaxsyncError('INTERNAL_ERROR', `fetching a token failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  return new TaxsyncError(cause.code, `${endpoint} not sent: no token: ${cause.message}`, {
    cause,
    retryable: cause.retryable,
    notSent: true,
    ...(cause.status === undefined ? {} : { status: cause.status }),
    ...(cause.retryAfterMs === undefined ? {} : { retryAfterMs: cause.retryAfterMs }),
    ...(cause.fields === undefined ? {} : { fields: cause.fields }),
    ...(cause.details === undefined ? {} : { details: cause.details }),
    ...(cause.http === undefined ? {} : { http: cause.http }),
  });
}

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
    const bearer = async (): Promise<string> => {
      try {
        return await tokens.get();
      } catch (error) {
        throw tokenFailure(error, options.endpoint);
      }
    };
    let token = await bearer();
    const sendOnce = (bearer: string) => observeCall(observe.onCall, { service, endpoint: options.endpoint }, () => http.send({ ...req, bearer }));
    let res = await sendOnce(token);
    for (let renewals = 0; tokenRefused(res) && renewals < MAX_RENEWALS; renewals++) {
      // A token revoked or expired early: renew (once for all callers holding it) and retry.
      tokens.invalidate(token);
      token = await bearer();
      res = await sendOnce(token);
    }
    // A 2xx page (a WAF's, a proxy's) is not the service's answer: a write so answered may never
    // have reached it, so it is retried (upserts are idempotent; an exemption create is looked for
    // first; a VAT submission's same bytes are resent), never taken as applied.
    if (res.status < 200 || res.status >= 300 || isForeignAnswer(res)) {
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
