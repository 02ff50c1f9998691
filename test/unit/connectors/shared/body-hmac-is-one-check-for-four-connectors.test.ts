import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../../../src/domain/secret.js';
import type { ConnectorSettings, VerifyResult, WebhookRequest } from '../../../../src/connectors/types.js';
import { signBodyHmacBase64, verifyBodyHmacBase64 } from '../../../../src/connectors/shared/crypto.js';
import * as quickbooks from '../../../../src/connectors/quickbooks/verify.js';
import * as shopify from '../../../../src/connectors/shopify/verify.js';
import * as woocommerce from '../../../../src/connectors/woocommerce/verify.js';
import * as xero from '../../../../src/connectors/xero/verify.js';

/**
 * Shopify, WooCommerce, Xero and QuickBooks sign alike: base64 HMAC-SHA256 of the raw body. One
 * helper checks all four; each keeps its own header and reason texts.
 */

const BODY = Buffer.from('{"id":1,"note":"ü"}');
const digest = (secret: string) => createHmac('sha256', secret).update(BODY).digest('base64');
const settings = (...secrets: string[]): ConnectorSettings => ({ source: 's', secrets: secrets.map((s) => new Secret(s)), toleranceSeconds: 300 });
const request = (headers: Record<string, string | undefined>): WebhookRequest => ({ headers, rawBody: BODY, contentType: 'application/json', receivedAt: new Date('2026-11-20T10:00:00Z') });
const reason = (result: VerifyResult) => (result.ok ? 'ok' : result.reason);

const CONNECTORS = [
  {
    name: 'Shopify',
    verify: shopify.verifyShopify,
    sign: shopify.signShopify,
    header: shopify.SIGNATURE_HEADER,
    reasons: ['missing X-Shopify-Hmac-Sha256 header', 'X-Shopify-Hmac-Sha256 is not base64', 'no Shopify webhook secret is configured', 'X-Shopify-Hmac-Sha256 does not match any configured secret'],
  },
  {
    name: 'WooCommerce',
    verify: woocommerce.verifyWoo,
    sign: woocommerce.signWoo,
    header: woocommerce.SIGNATURE_HEADER,
    reasons: ['missing X-WC-Webhook-Signature header', 'X-WC-Webhook-Signature is not base64', 'no WooCommerce webhook secret is configured', 'X-WC-Webhook-Signature does not match any configured secret'],
  },
  {
    name: 'Xero',
    verify: xero.verifyXero,
    sign: xero.signXero,
    header: xero.SIGNATURE_HEADER,
    reasons: ['missing x-xero-signature header', 'x-xero-signature is not base64', 'no Xero webhook key is configured', 'x-xero-signature does not match any configured webhook key'],
  },
  {
    name: 'QuickBooks',
    verify: quickbooks.verifyQuickBooks,
    sign: quickbooks.signQuickBooks,
    header: quickbooks.SIGNATURE_HEADER,
    reasons: ['missing intuit-signature header', 'intuit-signature is not base64', 'no QuickBooks verifier token is configured', 'intuit-signature does not match any configured verifier token'],
  },
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(CONNECTORS)('$name', ({ verify, sign, header, reasons }) => {
  const [missing, notBase64, noneConfigured, noMatch] = reasons as [string, string, string, string];

  it('signs the base64 HMAC-SHA256 of the raw body, computed independently, and accepts it', () => {
    expect(sign(BODY, 'the-secret')).toEqual({ [header]: digest('the-secret') });
    expect(verify(request({ [header]: digest('the-secret') }), settings('the-secret'))).toEqual({ ok: true });
  });

  it('keeps its reason texts', () => {
    expect(reason(verify(request({}), settings('s')))).toBe(missing);
    expect(reason(verify(request({ [header]: 'not base64!' }), settings('s')))).toBe(notBase64);
    expect(reason(verify(request({ [header]: digest('s') }), settings()))).toBe(noneConfigured);
    expect(reason(verify(request({ [header]: digest('other') }), settings('s', 't')))).toBe(noMatch);
  });

  it('reads a blank header as a missing one (Shopify and WooCommerce said "not base64" before: refused either way)', () => {
    expect(reason(verify(request({ [header]: '' }), settings('s')))).toBe(missing);
    expect(reason(verify(request({ [header]: '   ' }), settings('s')))).toBe(missing);
  });

  it('tries every secret, with no early exit, whichever one matches', () => {
    const reveal = vi.spyOn(Secret.prototype, 'reveal');
    expect(verify(request({ [header]: digest('first') }), settings('first', 'second', 'third'))).toEqual({ ok: true });
    expect(reveal).toHaveBeenCalledTimes(3);
  });

  it('puts no secret and no signature in a reason', () => {
    const signature = digest('wrong-secret-value');
    const text = reason(verify(request({ [header]: signature }), settings('configured-secret-one', 'configured-secret-two')));
    for (const secret of ['configured-secret-one', 'configured-secret-two', 'wrong-secret-value', signature]) expect(text).not.toContain(secret);
  });
});

describe('verifyBodyHmacBase64', () => {
  it('names the header by its label when given, else as it is keyed', () => {
    const spec = { header: 'x-sig', what: { none: 'Acme key', any: 'key' } };
    expect(verifyBodyHmacBase64(request({}), settings('k'), spec)).toEqual({ ok: false, reason: 'missing x-sig header' });
    expect(verifyBodyHmacBase64(request({}), settings('k'), { ...spec, label: 'X-Sig' })).toEqual({ ok: false, reason: 'missing X-Sig header' });
    expect(verifyBodyHmacBase64(request({ 'x-sig': signBodyHmacBase64(BODY, 'k') }), settings('k'), spec)).toEqual({ ok: true });
  });

  it('refuses a digest of another length without comparing it', () => {
    expect(verifyBodyHmacBase64(request({ 'x-sig': 'AAAA' }), settings('k'), { header: 'x-sig', what: { none: 'k', any: 'key' } }).ok).toBe(false);
  });
});
