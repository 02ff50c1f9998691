export { loadConfig, describeConfig, type Config, type WebhookConnectorId } from './load.js';
export { Secret } from './secret.js';
export { apiUrlProblem, isLoopbackHost } from './url-policy.js';
