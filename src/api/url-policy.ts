/** Hosts for which plain http is allowed: the spec requires HTTPS, but a local emulator is loopback. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  return /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Why a URL may not be used as an API base, or undefined when it may.
 * https is always fine; http only for loopback hosts unless insecure http was explicitly allowed.
 */
export function apiUrlProblem(raw: string, allowInsecureHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `must use https:// (got ${url.protocol}//)`;
  if (isLoopbackHost(url.hostname) || allowInsecureHttp) return undefined;
  return `must use https:// for the non-loopback host ${url.hostname} (plain http is allowed only for loopback, or with TAXSYNC_ALLOW_INSECURE_HTTP=1)`;
}
