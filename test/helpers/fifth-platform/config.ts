import { defineConnectorConfig } from '../../../src/connectors/types.js';

/** What Acme reads from the environment: pure, as src/config needs it (no cycle). */
export const acmeConfig = defineConnectorConfig({
  id: 'acme',
  secretVariable: 'ACME_WEBHOOK_SECRET',
});
