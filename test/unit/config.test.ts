import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../src/config/index.js';
import { hasCode } from '../../src/domain/errors.js';

function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(hasCode(error, 'CONFIG_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig', () => {
  it('starts with nothing set: emulator, default prefix and listener', () => {
    const config = loadConfig({});
    expect(config.usesEmulator).toBe(true);
    expect(config.redis.prefix).toBe('{taxsync}');
    expect(config.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.vatApi.module).toBe('vat');
    expect(config.logLevel).toBe('info');
  });

  it('reads the stalled-job interval, 30 s unless set, at least 1 s', () => {
    expect(loadConfig({}).queue.stalledIntervalMs).toBe(30_000);
    expect(loadConfig({ TAXSYNC_STALLED_INTERVAL_MS: '2000' }).queue.stalledIntervalMs).toBe(2_000);
    expect(failure({ TAXSYNC_STALLED_INTERVAL_MS: '10' })).toContain('TAXSYNC_STALLED_INTERVAL_MS must be at least 1000');
  });

  it('reads TAXSYNC_REFUND_WAIT as a duration, 30 minutes unless set, a bare number in minutes', () => {
    const refundWait = (value?: string) => loadConfig(value === undefined ? {} : { TAXSYNC_REFUND_WAIT: value }).queue.wait.refundDeadlineMs;
    expect(refundWait()).toBe(30 * 60_000);
    expect(refundWait('45')).toBe(45 * 60_000);
    expect(refundWait('90s')).toBe(90_000);
    expect(refundWait('2h')).toBe(2 * 3_600_000);
    expect(refundWait('1d')).toBe(86_400_000);
    expect(refundWait(' 15 min ')).toBe(15 * 60_000);
    expect(failure({ TAXSYNC_REFUND_WAIT: 'half an hour' })).toContain('TAXSYNC_REFUND_WAIT must be a duration such as 30m, 90s, 2h or 1d (a bare number is in minutes)');
    expect(failure({ TAXSYNC_REFUND_WAIT: '0s' })).toContain('TAXSYNC_REFUND_WAIT must be between 1 s and 30 days');
    expect(failure({ TAXSYNC_REFUND_WAIT: '31d' })).toContain('TAXSYNC_REFUND_WAIT must be between 1 s and 30 days');
  });

  it('reads REDIS_CLUSTER as "REDIS_URL is one node of a Redis Cluster", which needs REDIS_URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis://10.0.0.1:6379' }).redis.cluster).toBe(false);
    expect(loadConfig({ REDIS_URL: 'rediss://:pw@redis.example.com:6380', REDIS_CLUSTER: '1' }).redis).toMatchObject({ cluster: true, prefix: '{taxsync}' });
    expect(failure({ REDIS_CLUSTER: '1' })).toContain('REDIS_CLUSTER is set but REDIS_URL is not');
    expect(failure({ REDIS_URL: 'redis://10.0.0.1:6379', REDIS_CLUSTER: 'yes' })).toContain('REDIS_CLUSTER must be 1 or 0');
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.taxApi.timeouts)).toBe(true);
  });

  it('reports every bad variable in one message', () => {
    const message = failure({
      TAXSYNC_HTTP_PORT: 'eighty',
      LOG_LEVEL: 'loud',
      TAXSYNC_PREFIX: 'taxsync',
      REDIS_URL: 'localhost:6379',
    });
    for (const name of ['TAXSYNC_HTTP_PORT', 'LOG_LEVEL', 'TAXSYNC_PREFIX', 'REDIS_URL']) expect(message).toContain(name);
  });

  it('reports problems of single variables and of combinations together', () => {
    const message = failure({ TAXSYNC_HTTP_PORT: 'eighty', TAX_API_URL: 'http://tax.example.com' });
    expect(message).toContain('TAXSYNC_HTTP_PORT');
    expect(message).toContain('TAX_API_URL must use https://');
    expect(message).toContain('TAX_API_CLIENT_ID is required');
  });

  it('refuses plain http to a non-loopback API host, and allows loopback', () => {
    expect(failure({ TAX_API_URL: 'http://tax.example.com', TAX_API_CLIENT_ID: 'id', TAX_API_CLIENT_SECRET: 's' })).toMatch(
      /TAX_API_URL must use https:\/\//,
    );
    expect(loadConfig({ TAX_API_URL: 'http://127.0.0.1:9000', TAX_API_CLIENT_ID: 'id', TAX_API_CLIENT_SECRET: 's' }).usesEmulator).toBe(false);
    expect(
      loadConfig({
        TAX_API_URL: 'http://emulator:9000',
        TAX_API_CLIENT_ID: 'id',
        TAX_API_CLIENT_SECRET: 's',
        TAXSYNC_ALLOW_INSECURE_HTTP: '1',
      }).allowInsecureHttp,
    ).toBe(true);
  });

  it('requires credentials with a real API and a real API in production', () => {
    const message = failure({ TAX_API_URL: 'https://tax.example.com' });
    expect(message).toContain('TAX_API_CLIENT_ID');
    expect(message).toContain('TAX_API_CLIENT_SECRET');
    expect(failure({ NODE_ENV: 'production' })).toContain('TAX_API_URL is required');
  });

  it('defaults the VAT URL to the tax URL', () => {
    const config = loadConfig({ TAX_API_URL: 'https://tax.example.com', TAX_API_CLIENT_ID: 'id', TAX_API_CLIENT_SECRET: 's' });
    expect(config.vatApi.url).toBe('https://tax.example.com');
  });

  it('splits webhook secrets on commas for rotation', () => {
    const config = loadConfig({ SHOPIFY_WEBHOOK_SECRET: 'old, new' });
    expect(config.webhookSecrets.shopify.map((s) => s.reveal())).toEqual(['old', 'new']);
    expect(config.webhookSecrets.stripe).toEqual([]);
  });

  it('never prints a secret, in errors or in the printed config', () => {
    const secrets = { TAX_API_CLIENT_SECRET: 'sup3r-s3cret', SHOPIFY_WEBHOOK_SECRET: 'shpss_abc', TAXSYNC_ADMIN_TOKEN: 'adm1n-t0ken-0123456789abcdef-0123456789' };
    const message = failure({ ...secrets, TAX_API_URL: 'http://tax.example.com', TAXSYNC_HTTP_PORT: '-1' });
    const config = loadConfig({ ...secrets, TAX_API_URL: 'https://tax.example.com', TAX_API_CLIENT_ID: 'id' });
    const printed = [message, JSON.stringify(describeConfig(config)), inspect(config, { depth: 10 }), String(config.admin.operators[0]?.token)].join('\n');
    for (const value of Object.values(secrets)) expect(printed).not.toContain(value);
    expect(config.taxApi.clientSecret?.reveal()).toBe('sup3r-s3cret');
  });
});
