import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const woocommerceConfig = defineConnectorConfig({
  id: 'woocommerce',
  secretVariable: 'WOOCOMMERCE_WEBHOOK_SECRET',
  devSecret: 'dev-woocommerce-secret',
  /** The site's URL and a read REST API key pair. */
  platformApi: z
    .object({
      WOOCOMMERCE_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().optional()),
      WOOCOMMERCE_CONSUMER_KEY: secret,
      WOOCOMMERCE_CONSUMER_SECRET: secret,
    })
    .transform((env) => ({ apiUrl: env.WOOCOMMERCE_API_URL, consumerKey: env.WOOCOMMERCE_CONSUMER_KEY, consumerSecret: env.WOOCOMMERCE_CONSUMER_SECRET })),
});
