import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../../src/domain/secret.js';
import type { ConnectorSettings, WebhookRequest } from '../../../../src/connectors/types.js';
import { SIGNATURE_HEADER, signQuickBooks, verifyQuickBooks } from '../../../../src/connectors/quickbooks/verify.js';
import { webhookFixture, type WebhookFixture } from './qbo-fixtures.js';

function settings(...tokens: string[]): ConnectorSettings {
  return { source: 'quickbooks', secrets: tokens.map((t) => new Secret(t)), toleranceSeconds: 300 };
}

function request(fixture: WebhookFixture, headers: Record<string, string | undefined> = fixture.headers, rawBody = fixture.rawBody): WebhookRequest {
  return { headers, rawBody: Buffer.from(rawBody, 'utf8'), contentType: 'application/json', receivedAt: new Date(fixture.receivedAt) };
}

const FIXTURES = [
  'real-legacy-dotnet-sdk-test-vector.json',
  'real-legacy-java-sdk-test-vector.json',
  'real-legacy-invoice-update-void-delete-merge.json',
  'real-cloudevents-batch-two-realms.json',
];

describe('intuit-signature', () => {
  it.each(FIXTURES)('verifies %s with its verifier token', (name) => {
    const fixture = webhookFixture(name);
    expect(verifyQuickBooks(request(fixture), settings(fixture.secret))).toEqual({ ok: true });
  });

  it("verifies Intuit's SDK test vectors verbatim (their signatures were computed by Intuit, not by us)", () => {
    const dotnet = webhookFixture('real-legacy-dotnet-sdk-test-vector.json');
    const java = webhookFixture('real-legacy-java-sdk-test-vector.json');
    expect(dotnet.headers[SIGNATURE_HEADER]).toBe('6q+xGyMirJupwKTh2/WBl2NcdxzxqdIbk3sneKTxLWM=');
    expect(java.headers[SIGNATURE_HEADER]).toBe('JC2GUwciPmRBwEO7WvrRmKqu9tGOKL8FFallocTFi8Q=');
    expect(verifyQuickBooks(request(dotnet), settings('00faeec4-08d0-4996-bb37-698ae19f0149'))).toEqual({ ok: true });
    expect(verifyQuickBooks(request(java), settings('b5771f19b12ddb4bcdb9f08bdc50bc63878a'))).toEqual({ ok: true });
  });

  it('signs both formats as Intuit does (base64 HMAC-SHA256 of the raw body with the token)', () => {
    for (const name of FIXTURES) {
      const fixture = webhookFixture(name);
      expect(signQuickBooks(Buffer.from(fixture.rawBody), fixture.secret)).toEqual({ [SIGNATURE_HEADER]: fixture.headers[SIGNATURE_HEADER] });
    }
    const independent = createHmac('sha256', 'token').update('[]').digest('base64');
    expect(signQuickBooks(Buffer.from('[]'), 'token')[SIGNATURE_HEADER]).toBe(independent);
  });

  it('refuses a delivery signed with another token, and says so without the token or the signature', () => {
    const fixture = webhookFixture('real-cloudevents-batch-two-realms.json');
    const result = verifyQuickBooks(request(fixture), settings('not-the-verifier-token'));
    expect(result.ok).toBe(false);
    const reason = result.ok ? '' : result.reason;
    expect(reason).toBe('intuit-signature does not match any configured verifier token');
    expect(reason).not.toContain('not-the-verifier-token');
    expect(reason).not.toContain(fixture.headers[SIGNATURE_HEADER]!);
  });

  it('accepts either token during a rotation, whichever order they are configured in', () => {
    const fixture = webhookFixture('real-legacy-invoice-update-void-delete-merge.json');
    expect(verifyQuickBooks(request(fixture), settings('the-new-token', fixture.secret))).toEqual({ ok: true });
    expect(verifyQuickBooks(request(fixture), settings(fixture.secret, 'the-new-token'))).toEqual({ ok: true });
    const signedWithNew = { ...fixture.headers, ...signQuickBooks(Buffer.from(fixture.rawBody), 'the-new-token') };
    expect(verifyQuickBooks(request(fixture, signedWithNew), settings(fixture.secret, 'the-new-token'))).toEqual({ ok: true });
  });

  it('refuses a body changed after signing (the bytes are signed, not the JSON)', () => {
    const fixture = webhookFixture('real-legacy-java-sdk-test-vector.json');
    const reserialised = JSON.stringify(fixture.body, null, 1);
    expect(verifyQuickBooks(request(fixture, fixture.headers, reserialised), settings(fixture.secret)).ok).toBe(false);
  });

  it('refuses a missing, blank or non-base64 header, and any delivery when no token is configured', () => {
    const fixture = webhookFixture('real-legacy-dotnet-sdk-test-vector.json');
    const reasonOf = (headers: Record<string, string | undefined>, s = settings(fixture.secret)) => {
      const result = verifyQuickBooks(request(fixture, headers), s);
      return result.ok ? 'ok' : result.reason;
    };
    expect(reasonOf({})).toBe('missing intuit-signature header');
    expect(reasonOf({ [SIGNATURE_HEADER]: '  ' })).toBe('missing intuit-signature header');
    expect(reasonOf({ [SIGNATURE_HEADER]: 'not base64!' })).toBe('intuit-signature is not base64');
    expect(reasonOf(fixture.headers, settings())).toBe('no QuickBooks verifier token is configured');
  });
});
