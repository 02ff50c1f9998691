import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig, numberedIdsCanBegin } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const shopifyConfig = defineConnectorConfig({
  id: 'shopify',
  secretVariable: 'SHOPIFY_WEBHOOK_SECRET',
  devSecret: 'dev-shopify-secret',
  // Orders and customers are numbers; refunds `refund-<number>`.
  externalIds: { described: 'numbers, refund-<number>', canBegin: (text: string) => numberedIdsCanBegin(['', 'refund-'], text) },
  shopHeader: { name: 'x-shopify-shop-domain', example: 'your-shop.myshopify.com', normalise: (value: string) => value.trim().toLowerCase() },
  /** The shop's Admin API base with its version, and an access token with read_orders. */
  platformApi: z
    .object({
      SHOPIFY_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().optional()),
      SHOPIFY_ACCESS_TOKEN: secret,
    })
    .transform((env) => ({ apiUrl: env.SHOPIFY_API_URL, accessToken: env.SHOPIFY_ACCESS_TOKEN })),
});
