import type { z } from 'zod';
import { errorFromResponse } from './errors.js';
import type { HttpClient, HttpRequest, HttpResponse } from './http.js';
import { observeCall, type ApiCall, type ApiCallObserver } from './observe.js';
import { parseResponse } from './parse.js';
import type { TokenManager } from './token.js';

export interface AuthedCaller {
  /** Sends with a bearer token; a 401 renews the token once and retries once. Non-2xx throws. */
  send(req: Omit<HttpRequest, 'bearer'>, options: { endpoint: string; vatSubmission?: boolean }): Promise<HttpResponse>;
  /** send() plus validation of the JSON body against `schema`. */
  json<S extends z.ZodType>(
    req: Omit<HttpRequest, 'bearer'>,
    schema: S,
    options: { endpoint: string; vatSubmission?: boolean },
  ): Promise<{ data: z.infer<S>; status: number }>;
}

export function createAuthedCaller(
  http: HttpClient,
  tokens: TokenManager,
  observe: { service?: ApiCall['service']; onCall?: ApiCallObserver } = {},
): AuthedCaller {
  const service = observe.service ?? 'tax';
  async function send(
    req: Omit<HttpRequest, 'bearer'>,
    options: { endpoint: string; vatSubmission?: boolean },
  ): Promise<HttpResponse> {
    let token = await tokens.get();
    const sendOnce = (bearer: string) => observeCall(observe.onCall, { service, endpoint: options.endpoint }, () => http.send({ ...req, bearer }));
    let res = await sendOnce(token);
    if (res.status === 401) {
      // One renewal, one retry: a token revoked or expired early. A second 401 is persistent.
      tokens.invalidate(token);
      token = await tokens.get();
      res = await sendOnce(token);
    }
    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res, options);
    }
    return res;
  }

  return {
    send,
    async json(req, schema, options) {
      const res = await send(req, options);
      return { data: parseResponse(schema, res, options.endpoint), status: res.status };
    },
  };
}
