import { describe, expect, it } from 'vitest';
import { Secret } from '../../../../src/domain/secret.js';
import { quickbooksConfig } from '../../../../src/connectors/quickbooks/config.js';
import { externalIdOf } from '../../../../src/connectors/quickbooks/map.js';

describe('QuickBooks configuration', () => {
  it('names its verifier-token variable and a development token', () => {
    expect(quickbooksConfig).toMatchObject({ id: 'quickbooks', secretVariable: 'QUICKBOOKS_VERIFIER_TOKEN', devSecret: 'dev-quickbooks-verifier-token' });
  });

  it("reads the OAuth client and defaults to Intuit's production API and token endpoint", () => {
    const api = quickbooksConfig.platformApi.parse({ QUICKBOOKS_CLIENT_ID: 'ABc123', QUICKBOOKS_CLIENT_SECRET: 's3cr3t' });
    expect(api).toMatchObject({
      clientId: 'ABc123',
      apiUrl: 'https://quickbooks.api.intuit.com',
      tokenUrl: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
    });
    expect(api.clientSecret).toBeInstanceOf(Secret);
    expect(api.clientSecret?.reveal()).toBe('s3cr3t');
    expect(JSON.stringify(api)).not.toContain('s3cr3t');
  });

  it('takes the sandbox (or an emulator) as the API URL; blanks are unset', () => {
    const api = quickbooksConfig.platformApi.parse({ QUICKBOOKS_API_URL: 'https://sandbox-quickbooks.api.intuit.com', QUICKBOOKS_CLIENT_ID: ' ', QUICKBOOKS_TOKEN_URL: '' });
    expect(api).toEqual({ clientId: undefined, clientSecret: undefined, apiUrl: 'https://sandbox-quickbooks.api.intuit.com', tokenUrl: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer' });
    expect(quickbooksConfig.platformApi.safeParse({ QUICKBOOKS_API_URL: 'not a url' }).success).toBe(false);
  });
});

describe('external ids', () => {
  it('keep Invoice 145, SalesReceipt 145, CreditMemo 145 and RefundReceipt 145 apart; refunds start with refund-', () => {
    const ids = [externalIdOf('Invoice', '145'), externalIdOf('SalesReceipt', '145'), externalIdOf('CreditMemo', '145'), externalIdOf('RefundReceipt', '145')];
    expect(ids).toEqual(['invoice-145', 'salesreceipt-145', 'refund-creditmemo-145', 'refund-refundreceipt-145']);
    expect(externalIdOf('Customer', '145')).toBe('145');
  });

  it('tell which connection prefixes could begin one of them (docs/connections.md, "Prefixes")', () => {
    const { canBegin } = quickbooksConfig.externalIds;
    for (const text of ['145', 'inv', 'invoice-1', 'sales', 'refund-', 'refund-credit', 'refund-refundreceipt-9', '']) expect(canBegin(text), text).toBe(true);
    for (const text of ['fr-', 'qb.', 'invoice-x', 'refund-9', 'credit']) expect(canBegin(text), text).toBe(false);
  });
});
