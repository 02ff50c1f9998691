import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const shopifyConfig = defineConnectorConfig({
  id: 'shopify',
  secretVariable: 'SHOPIFY_WEBHOOK_SECRET',
  devSecret: 'dev-shopify-secret',
  /** The shop's Admin API base with its version, and an access token with read_orders. */
  platformApi: z
    .object({
      SHOPIFY_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().optional()),
      SHOPIFY_ACCESS_TOKEN: secret,
    })
    .transform((env) => ({ apiUrl: env.SHOPIFY_API_URL, accessToken: env.SHOPIFY_ACCESS_TOKEN })),
});
