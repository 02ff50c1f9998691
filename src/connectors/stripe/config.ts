import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const stripeConfig = defineConnectorConfig({
  id: 'stripe',
  secretVariable: 'STRIPE_WEBHOOK_SECRET',
  devSecret: 'whsec_dev_stripe_secret',
  /** A restricted key with read access to invoices and credit notes. */
  platformApi: z
    .object({
      STRIPE_API_KEY: secret,
      STRIPE_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().default('https://api.stripe.com')),
    })
    .transform((env) => ({ apiKey: env.STRIPE_API_KEY, apiUrl: env.STRIPE_API_URL })),
});
