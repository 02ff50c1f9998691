import type { Config } from '../config/index.js';
import type { Secret } from '../domain/secret.js';

/**
 * The one rule for "can taxsync read this platform's API": `taxsync backfill` refuses to start
 * without it (with `missing` as its message), and a waiting refund fetches its original only from
 * a platform that has it.
 */
export type PlatformAccess =
  | { platform: 'stripe'; baseUrl: string; apiKey: Secret }
  | { platform: 'shopify'; apiUrl: string; accessToken: Secret }
  | { platform: 'woocommerce'; apiUrl: string; consumerKey: Secret; consumerSecret: Secret; pagePauseMs: number };

export const PLATFORMS = ['stripe', 'shopify', 'woocommerce'] as const;
export type Platform = (typeof PLATFORMS)[number];

export function platformAccess<P extends Platform>(
  platforms: Config['platforms'],
  platform: P,
): { ok: true; access: Extract<PlatformAccess, { platform: P }> } | { ok: false; missing: string } {
  const found = accessOf(platforms, platform);
  return 'missing' in found ? { ok: false, missing: found.missing } : { ok: true, access: found as Extract<PlatformAccess, { platform: P }> };
}

function accessOf(platforms: Config['platforms'], platform: Platform): PlatformAccess | { missing: string } {
  if (platform === 'stripe') {
    const { apiKey, apiUrl } = platforms.stripe;
    return apiKey ? { platform, baseUrl: apiUrl, apiKey } : { missing: 'STRIPE_API_KEY is not set: taxsync reads Stripe with a (restricted, read-only) API key' };
  }
  if (platform === 'shopify') {
    const { apiUrl, accessToken } = platforms.shopify;
    return apiUrl && accessToken
      ? { platform, apiUrl, accessToken }
      : { missing: "SHOPIFY_API_URL and SHOPIFY_ACCESS_TOKEN must be set: taxsync reads the shop's orders with an Admin API access token (read_orders)" };
  }
  const { apiUrl, consumerKey, consumerSecret, pagePauseMs } = platforms.woocommerce;
  return apiUrl && consumerKey && consumerSecret
    ? { platform, apiUrl, consumerKey, consumerSecret, pagePauseMs }
    : { missing: "WOOCOMMERCE_API_URL, WOOCOMMERCE_CONSUMER_KEY and WOOCOMMERCE_CONSUMER_SECRET must be set: taxsync reads the site's orders with a REST API key (Read)" };
}

/** platformAccess for a connection's own API settings (docs/connections.md): a connection reads its own account. */
export function connectionAccess(connection: { platform: string; api: unknown }): ReturnType<typeof platformAccess> | undefined {
  if (!(PLATFORMS as readonly string[]).includes(connection.platform)) return undefined;
  const platform = connection.platform as Platform;
  if (connection.api === undefined) return { ok: false, missing: `the ${platform} connection has no API credentials (its "api" in the connections file)` };
  return platformAccess({ [platform]: connection.api } as unknown as Config['platforms'], platform);
}
