import { request } from 'undici';

/**
 * One GET of a platform's list endpoint for `taxsync backfill`: a 429 is waited out (Retry-After
 * seconds when given, else one second, doubling) up to five times; any other answer but 200 throws
 * naming the platform and the path. `before` runs before every call (a rate-limit pause).
 */
export async function getListPage(
  url: URL,
  options: { platform: string; headers: Record<string, string>; sleep: (ms: number) => Promise<void>; before?: () => Promise<void>; after?: (headers: Record<string, string | string[] | undefined>) => void },
): Promise<{ body: unknown; headers: Record<string, string | string[] | undefined> }> {
  for (let attempt = 0; ; attempt += 1) {
    await options.before?.();
    const res = await request(url, { method: 'GET', headers: options.headers });
    options.after?.(res.headers);
    if (res.statusCode === 429 && attempt < 5) {
      await res.body.dump();
      const after = Number(res.headers['retry-after']);
      await options.sleep(Number.isFinite(after) && after > 0 ? after * 1000 : 1000 * 2 ** attempt);
      continue;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`${options.platform} answered ${res.statusCode} to GET ${url.pathname}`);
    }
    return { body: await res.body.json(), headers: res.headers };
  }
}
