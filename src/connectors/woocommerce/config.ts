import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig, numberedIdsCanBegin } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const woocommerceConfig = defineConnectorConfig({
  id: 'woocommerce',
  secretVariable: 'WOOCOMMERCE_WEBHOOK_SECRET',
  devSecret: 'dev-woocommerce-secret',
  // Orders and customers are numbers; refunds `refund-<order>-<refund>`; guests `guest-order-<order>`.
  externalIds: { described: 'numbers, refund-<number>-<number>, guest-order-<number>', canBegin: (text: string) => numberedIdsCanBegin(['', 'refund-', 'guest-order-'], text) },
  // The site's URL as WooCommerce sends it (`https://shop.example.com/`), compared without the scheme's case or a trailing slash.
  shopHeader: { name: 'x-wc-webhook-source', example: 'https://shop.example.com/', normalise: (value: string) => value.trim().toLowerCase().replace(/\/+$/, '') },
  /** The site's URL and a read REST API key pair. */
  platformApi: z
    .object({
      WOOCOMMERCE_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().optional()),
      WOOCOMMERCE_CONSUMER_KEY: secret,
      WOOCOMMERCE_CONSUMER_SECRET: secret,
      // WooCommerce sends no rate-limit header: the pause between list pages is the pacing (docs/configuration.md).
      WOOCOMMERCE_API_PAGE_PAUSE_MS: z.preprocess(
        blankToUndefined,
        z.coerce
          .number({ error: 'must be an integer' })
          .int({ error: 'must be an integer' })
          .min(0, { error: 'must be at least 0' })
          .max(60_000, { error: 'must be at most 60000' })
          .default(500),
      ),
    })
    .transform((env) => ({
      apiUrl: env.WOOCOMMERCE_API_URL,
      consumerKey: env.WOOCOMMERCE_CONSUMER_KEY,
      consumerSecret: env.WOOCOMMERCE_CONSUMER_SECRET,
      pagePauseMs: env.WOOCOMMERCE_API_PAGE_PAUSE_MS,
    })),
});
