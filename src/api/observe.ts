import { isTaxsyncError } from '../domain/errors.js';
import { ENDPOINTS, endpointLabel, type EndpointName } from './endpoints.js';
import type { HttpResponse } from './http.js';

/** One request as metrics see it: `endpoint` is the endpoint table's name, never a URL with ids. */
export interface ApiCall {
  service: 'tax' | 'vat' | 'auth';
  endpoint: string;
  /** The HTTP status, or the error's code when no response came back (`API_TIMEOUT`, `API_NETWORK`). */
  status: string;
  seconds: number;
}

/** Told of every request after it ends; must not throw (metrics, not control flow). */
export type ApiCallObserver = (call: ApiCall) => void;

// Callers name endpoints by their label ("PUT /v1/transactions/"): metrics want the table name.
const NAME_BY_LABEL = new Map<string, string>((Object.keys(ENDPOINTS) as EndpointName[]).map((name) => [endpointLabel(name), name]));

export function endpointName(label: string): string {
  // VAT labels carry the configured module segment in place of `{module}`.
  return NAME_BY_LABEL.get(label) ?? NAME_BY_LABEL.get(label.replace(/^(\S+ \/api\/)[^/]+(\/v1\/)/, '$1{module}$2')) ?? 'other';
}

/** Runs one request and reports it to `observer` (when there is one), response or error. */
export async function observeCall(
  observer: ApiCallObserver | undefined,
  call: { service: ApiCall['service']; endpoint: string },
  send: () => Promise<HttpResponse>,
): Promise<HttpResponse> {
  if (!observer) return send();
  const started = process.hrtime.bigint();
  const report = (status: string) => {
    try {
      observer({ service: call.service, endpoint: endpointName(call.endpoint), status, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    } catch {
      // A metrics failure never fails a request.
    }
  };
  try {
    const res = await send();
    report(String(res.status));
    return res;
  } catch (error) {
    report(isTaxsyncError(error) ? error.code : 'ERROR');
    throw error;
  }
}
