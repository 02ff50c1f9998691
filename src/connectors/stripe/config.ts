import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const stripeConfig = defineConnectorConfig({
  id: 'stripe',
  secretVariable: 'STRIPE_WEBHOOK_SECRET',
  devSecret: 'whsec_dev_stripe_secret',
});
