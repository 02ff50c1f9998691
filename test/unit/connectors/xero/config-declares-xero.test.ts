import { describe, expect, it } from 'vitest';
import { xeroConfig, xeroIdsCanBegin } from '../../../../src/connectors/xero/config.js';
import { Secret } from '../../../../src/domain/secret.js';

describe('the Xero connector config', () => {
  it('reads the webhook key from XERO_WEBHOOK_KEY and has a development key', () => {
    expect(xeroConfig).toMatchObject({ id: 'xero', secretVariable: 'XERO_WEBHOOK_KEY' });
    expect(xeroConfig.devSecret).toBeTruthy();
  });

  it('reads the OAuth app and the URLs, with Xero\'s own URLs by default', () => {
    const api = xeroConfig.platformApi.parse({ XERO_CLIENT_ID: 'ABC123', XERO_CLIENT_SECRET: 'shh-its-a-secret' });
    expect(api).toMatchObject({ clientId: 'ABC123', apiUrl: 'https://api.xero.com', identityUrl: 'https://identity.xero.com' });
    expect(api.clientSecret).toBeInstanceOf(Secret);
    expect(api.clientSecret?.reveal()).toBe('shh-its-a-secret');
    expect(JSON.stringify(api)).not.toContain('shh-its-a-secret');
  });

  it('takes other URLs (the emulator) and reads blanks as unset', () => {
    const api = xeroConfig.platformApi.parse({ XERO_CLIENT_ID: ' ', XERO_API_URL: 'http://127.0.0.1:4010', XERO_IDENTITY_URL: '' });
    expect(api).toMatchObject({ clientId: undefined, clientSecret: undefined, apiUrl: 'http://127.0.0.1:4010', identityUrl: 'https://identity.xero.com' });
    expect(xeroConfig.platformApi.safeParse({ XERO_API_URL: 'not a url' }).success).toBe(false);
  });

  it.each([
    ['', true],
    ['a', true],
    ['a03ffcd2-5d91', true],
    ['a03ffcd2-5d91-4c7e-b483-318584e9e439', true],
    ['ref', true],
    ['refund-', true],
    ['refund-249f15fa-', true],
    ['A', false],
    ['g', false],
    ['fr-', false],
    ['a03ffcd2x', false],
    ['a03ffcd2-5d91-4c7e-b483-318584e9e439-', false],
    ['refund-x', false],
    ['refunds', false],
  ])('says whether a Xero id can begin with %j (%s)', (text, can) => {
    expect(xeroIdsCanBegin(text)).toBe(can);
  });
});
