import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { isTaxsyncError } from '../../src/domain/errors.js';

function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(isTaxsyncError(error) && error.code).toBe('CONFIG_INVALID');
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted the environment');
}

const LONG = 'x'.repeat(32);

describe('admin and metrics tokens at boot', () => {
  it('refuses an admin or metrics token shorter than 32 characters, naming the variable and never the token', () => {
    const short = 'sh0rt-but-secret-token';
    const message = failure({ TAXSYNC_ADMIN_TOKEN: short, TAXSYNC_METRICS_TOKEN: `${short}-m`, TAXSYNC_ADMIN_TOKENS: `bob:${short}-b` });
    expect(message).toMatch(/TAXSYNC_ADMIN_TOKEN must be at least 32 characters/);
    expect(message).toMatch(/TAXSYNC_METRICS_TOKEN must be at least 32 characters/);
    expect(message).toMatch(/TAXSYNC_ADMIN_TOKENS operator "bob": the token must be at least 32 characters/);
    expect(message).not.toContain(short);
  });

  it('reads named operators beside TAXSYNC_ADMIN_TOKEN (the operator "admin")', () => {
    const config = loadConfig({ TAXSYNC_ADMIN_TOKEN: `a${LONG}`, TAXSYNC_ADMIN_TOKENS: ` alice:b${LONG} , bob:c${LONG}` });
    expect(config.admin.operators.map((o) => [o.name, o.token.reveal()])).toEqual([
      ['admin', `a${LONG}`],
      ['alice', `b${LONG}`],
      ['bob', `c${LONG}`],
    ]);
    expect(JSON.stringify(config)).not.toContain(LONG);
  });

  it('refuses a malformed entry, a name twice, a shared token or a second "admin", without printing tokens', () => {
    const message = failure({ TAXSYNC_ADMIN_TOKEN: `a${LONG}`, TAXSYNC_ADMIN_TOKENS: `no-colon-${LONG},alice:b${LONG},alice:c${LONG},bob:b${LONG},admin:d${LONG}` });
    expect(message).toContain('entry 1 must be name:token');
    expect(message).toContain('operator "alice" is named twice');
    expect(message).toContain('operator "bob" has the same token as "alice"');
    expect(message).toContain('names an operator "admin"');
    expect(message).not.toContain(LONG);
  });

  it('allows a session cookie without Secure only on a loopback listener', () => {
    expect(failure({ TAXSYNC_ADMIN_INSECURE_COOKIE: '1' })).toContain('TAXSYNC_ADMIN_INSECURE_COOKIE=1 is only allowed with TAXSYNC_HTTP_HOST on a loopback address');
    expect(loadConfig({ TAXSYNC_ADMIN_INSECURE_COOKIE: '1', TAXSYNC_HTTP_HOST: '127.0.0.1' }).admin.secureCookie).toBe(false);
    expect(loadConfig({}).admin.secureCookie).toBe(true);
  });
});
