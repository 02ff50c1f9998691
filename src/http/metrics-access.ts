import type { IncomingHttpHeaders } from 'node:http';
import type { Secret } from '../domain/secret.js';
import { isLoopbackHost } from '../api/url-policy.js';
import { sameBytes } from './admin/operators.js';

/** Headers a proxy adds: a request carrying one came from elsewhere, whatever its socket says. */
const FORWARDED = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * Who may read /metrics (queue depths, error codes, rates: operational detail, not for anyone on
 * 0.0.0.0). With TAXSYNC_METRICS_TOKEN set: a request with `Authorization: Bearer <token>`. Without
 * it: only a client on this host, connected directly (not through a proxy on this host).
 */
export function metricsAllowed(token: Secret | undefined, request: { headers: IncomingHttpHeaders; remoteAddress: string | undefined }): boolean {
  if (token !== undefined) {
    const match = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    return match !== null && sameBytes(match[1]!, token.reveal());
  }
  const address = (request.remoteAddress ?? '').replace(/^::ffff:/, '');
  return isLoopbackHost(address) && !FORWARDED.some((name) => request.headers[name] !== undefined);
}

export const METRICS_REFUSED = {
  error: 'unauthorized',
  message: '/metrics needs Authorization: Bearer <TAXSYNC_METRICS_TOKEN>; without that setting it answers only clients on this host, connected directly',
};
