import { describe, expect, it } from 'vitest';
import { isIntentToReceive, signXero, verifyXero, xeroAnswer, SIGNATURE_HEADER } from '../../../../src/connectors/xero/verify.js';
import { FIXTURE_KEY, request, settings, webhookFixture } from './helpers.js';

/**
 * x-xero-signature = base64(HMAC-SHA256(webhook key as UTF-8, raw body)); 200 with an empty body
 * for a correctly signed request (Intent to Receive included), 401 otherwise
 * (docs/research/accounting-payloads.md, "Webhooks"). The fixtures' signatures were computed
 * outside this code (node:crypto and Python's hmac).
 */

const SIGNED = ['real-intent-to-receive-correctly-signed', 'real-invoice-and-contact-events', 'real-creditnote-event'];

describe('Xero webhook signatures', () => {
  it.each(SIGNED)('accepts %s, signed with the webhook key, and answers 200 with an empty body', (name) => {
    const fixture = webhookFixture(name);
    const verdict = verifyXero(request(fixture), settings(fixture.secret));
    expect(verdict).toEqual({ ok: true });
    expect(xeroAnswer(verdict)).toEqual({ status: fixture.expectedResponse.status, body: '' });
    expect(fixture.expectedResponse).toMatchObject({ status: 200, body: '' });
  });

  it('refuses the Intent to Receive request signed with another key, and answers 401', () => {
    const fixture = webhookFixture('real-intent-to-receive-incorrectly-signed');
    const verdict = verifyXero(request(fixture), settings(fixture.secret));
    expect(verdict.ok).toBe(false);
    expect(xeroAnswer(verdict)).toEqual({ status: 401, body: '' });
    expect(fixture.expectedResponse.status).toBe(401);
  });

  it('accepts a delivery signed with either key during a rotation, whichever order they are configured in', () => {
    const fixture = webhookFixture('real-invoice-and-contact-events');
    expect(verifyXero(request(fixture), settings('the-new-key', FIXTURE_KEY))).toEqual({ ok: true });
    expect(verifyXero(request(fixture), settings(FIXTURE_KEY, 'the-new-key'))).toEqual({ ok: true });
    const signedWithNew = { ...request(fixture), headers: signXero(Buffer.from(fixture.rawBody), 'the-new-key') };
    expect(verifyXero(signedWithNew, settings(FIXTURE_KEY, 'the-new-key'))).toEqual({ ok: true });
    expect(verifyXero(signedWithNew, settings(FIXTURE_KEY)).ok).toBe(false);
  });

  it('signs as Xero does: the fixtures\' headers are reproduced', () => {
    for (const name of SIGNED) {
      const fixture = webhookFixture(name);
      expect(signXero(Buffer.from(fixture.rawBody, 'utf8'), fixture.secret)).toEqual({ [SIGNATURE_HEADER]: fixture.headers[SIGNATURE_HEADER] });
    }
  });

  it('checks the bytes as sent: the same JSON re-serialised with spaces no longer matches', () => {
    const fixture = webhookFixture('real-intent-to-receive-correctly-signed');
    const respaced = { ...request(fixture), rawBody: Buffer.from(JSON.stringify(fixture.body, null, 1)) };
    expect(verifyXero(respaced, settings(fixture.secret)).ok).toBe(false);
  });

  it.each([
    ['a missing header', {}],
    ['an empty header', { [SIGNATURE_HEADER]: '' }],
    ['a header that is not base64', { [SIGNATURE_HEADER]: 'not base64!' }],
    ['a digest of the wrong length', { [SIGNATURE_HEADER]: 'AAAA' }],
  ])('refuses %s', (_what, headers) => {
    const fixture = webhookFixture('real-intent-to-receive-correctly-signed');
    expect(verifyXero({ ...request(fixture), headers }, settings(fixture.secret)).ok).toBe(false);
  });

  it('refuses everything when no key is configured', () => {
    const fixture = webhookFixture('real-intent-to-receive-correctly-signed');
    expect(verifyXero(request(fixture), settings())).toEqual({ ok: false, reason: 'no Xero webhook key is configured' });
  });

  it('never puts a key or a signature in its reason', () => {
    const fixture = webhookFixture('real-intent-to-receive-incorrectly-signed');
    const verdict = verifyXero(request(fixture), settings(fixture.secret, 'second-secret-key'));
    if (verdict.ok) throw new Error('expected a refusal');
    for (const text of [fixture.secret, 'second-secret-key', fixture.headers[SIGNATURE_HEADER]!]) expect(verdict.reason).not.toContain(text);
  });
});

describe('Intent to Receive', () => {
  it('is recognised from the raw body or the parsed JSON', () => {
    const fixture = webhookFixture('real-intent-to-receive-correctly-signed');
    expect(isIntentToReceive(Buffer.from(fixture.rawBody))).toBe(true);
    expect(isIntentToReceive(fixture.body)).toBe(true);
  });

  it('is not a delivery with events, one with sequences other than 0, or a body that is not JSON', () => {
    expect(isIntentToReceive(webhookFixture('real-invoice-and-contact-events').body)).toBe(false);
    expect(isIntentToReceive({ events: [], firstEventSequence: 5, lastEventSequence: 5 })).toBe(false);
    expect(isIntentToReceive(Buffer.from('{"events": ['))).toBe(false);
    expect(isIntentToReceive(null)).toBe(false);
    expect(isIntentToReceive([])).toBe(false);
  });
});
