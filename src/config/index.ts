export { loadConfig, describeConfig, redacted, MIN_TOKEN_LENGTH, type AckDurability, type Config, type Operator, type WebhookSecrets } from './load.js';
