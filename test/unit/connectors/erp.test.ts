import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { erpConnector } from '../../../src/connectors/erp/index.js';
import { decodeSecret } from '../../../src/connectors/erp/verify.js';
import type { ConnectorSettings, ParseResult, WebhookRequest } from '../../../src/connectors/types.js';

// The Standard Webhooks published test vector (the same in the reference libraries' tests).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const VECTOR_TIME = new Date(1614265330 * 1000);

const SECRET = 'whsec_c2VjcmV0LWtleS1zaGFyZWQtd2l0aC10aGUtZXJw'; // base64 of "secret-key-shared-with-the-erp"
const RECEIVED = new Date('2026-11-20T10:00:05Z');

function settings(overrides: Partial<ConnectorSettings> = {}): ConnectorSettings {
  return { source: 'api', secrets: [new Secret(SECRET)], toleranceSeconds: 300, ...overrides };
}

function req(body: string, headers: Record<string, string>, receivedAt = RECEIVED): WebhookRequest {
  return { headers, rawBody: Buffer.from(body), contentType: 'application/json', receivedAt };
}

function signed(body: unknown): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return req(raw, erpConnector.sign(Buffer.from(raw), SECRET, RECEIVED));
}

/** Signature computed here, independently: HMAC-SHA256 over `${id}.${timestamp}.${body}` with the decoded key. */
function v1(keyBase64: string, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', Buffer.from(keyBase64, 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

const customer = (id: string, source = 'api') => ({
  id,
  type: 'customer.upserted',
  occurred_at: '2026-11-20T09:00:00Z',
  connector: 'erp',
  record: { kind: 'customer', source, external_id: `C-${id}` },
  data: { name: `Customer ${id}` },
});

describe('ERP signature (Standard Webhooks)', () => {
  const vectorHeaders = (signature = VECTOR.signature, timestamp = VECTOR.timestamp) => ({
    'webhook-id': VECTOR.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
  });

  it('accepts the specification test vector, with and without the whsec_ prefix', () => {
    for (const secret of [VECTOR.secret, VECTOR.secret.slice('whsec_'.length)]) {
      const result = erpConnector.verify(req(VECTOR.body, vectorHeaders(), VECTOR_TIME), settings({ secrets: [new Secret(secret)] }));
      expect(result).toEqual({ ok: true });
    }
  });

  it('signs exactly like the specification', () => {
    const headers = erpConnector.sign(Buffer.from(VECTOR.body), VECTOR.secret, VECTOR_TIME);
    expect(headers['webhook-timestamp']).toBe(VECTOR.timestamp);
    expect(headers['webhook-signature']).toBe(v1('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', headers['webhook-id']!, VECTOR.timestamp, VECTOR.body));
  });

  it('accepts a header with several signatures when any v1 matches, skipping v1a and junk', () => {
    const header = `v1a,AAAA v1,${Buffer.alloc(32).toString('base64')} nonsense ${VECTOR.signature}`;
    const result = erpConnector.verify(req(VECTOR.body, vectorHeaders(header), VECTOR_TIME), settings({ secrets: [new Secret(VECTOR.secret)] }));
    expect(result).toEqual({ ok: true });
  });

  it('matches any configured secret (rotation) and refuses when none matches', () => {
    const secrets = [new Secret(SECRET), new Secret(VECTOR.secret)];
    expect(erpConnector.verify(req(VECTOR.body, vectorHeaders(), VECTOR_TIME), settings({ secrets }))).toEqual({ ok: true });
    const failed = erpConnector.verify(req(VECTOR.body, vectorHeaders(), VECTOR_TIME), settings());
    expect(failed.ok).toBe(false);
    expect(JSON.stringify(failed)).not.toContain('c2VjcmV0');
  });

  it('uses the base64-decoded key, not the secret text', () => {
    const textKeyed = `v1,${createHmac('sha256', VECTOR.secret).update(`${VECTOR.id}.${VECTOR.timestamp}.${VECTOR.body}`).digest('base64')}`;
    const result = erpConnector.verify(req(VECTOR.body, vectorHeaders(textKeyed), VECTOR_TIME), settings({ secrets: [new Secret(VECTOR.secret)] }));
    expect(result.ok).toBe(false);
  });

  it('holds webhook-timestamp to the tolerance in both directions and refuses a non-integer one', () => {
    const base = Number(VECTOR.timestamp);
    for (const [offset, ok] of [
      [300, true],
      [-300, true],
      [301, false],
      [-301, false],
    ] as const) {
      const at = new Date((base + offset) * 1000);
      expect(erpConnector.verify(req(VECTOR.body, vectorHeaders(), at), settings({ secrets: [new Secret(VECTOR.secret)] })).ok).toBe(ok);
    }
    expect(erpConnector.verify(req(VECTOR.body, vectorHeaders(VECTOR.signature, '1614265330.0'), VECTOR_TIME), settings()).ok).toBe(false);
  });

  it('refuses a delivery missing any of the three headers', () => {
    for (const drop of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers: Record<string, string> = vectorHeaders();
      delete headers[drop];
      expect(erpConnector.verify(req(VECTOR.body, headers, VECTOR_TIME), settings({ secrets: [new Secret(VECTOR.secret)] })).ok).toBe(false);
    }
  });

  it('decodes secrets: whsec_ prefix optional, URL-safe alphabet and missing padding accepted, non-base64 refused', () => {
    expect(decodeSecret('whsec_c2VjcmV0')).toEqual(Buffer.from('secret'));
    expect(decodeSecret('c2VjcmV0')).toEqual(Buffer.from('secret'));
    expect(decodeSecret('whsec_-_8A')).toEqual(Buffer.from([0xfb, 0xff, 0x00]));
    expect(decodeSecret('whsec_-_8')).toEqual(Buffer.from([0xfb, 0xff]));
    expect(decodeSecret('whsec_+/8=')).toEqual(Buffer.from([0xfb, 0xff]));
    expect(decodeSecret('whsec_not base64!')).toBeUndefined();
    expect(decodeSecret('whsec_a')).toBeUndefined();
    expect(decodeSecret('whsec_')).toBeUndefined();
    const result = erpConnector.verify(req(VECTOR.body, vectorHeaders(), VECTOR_TIME), settings({ secrets: [new Secret('whsec_not base64!')] }));
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/base64/) });
    expect(JSON.stringify(result)).not.toContain('not base64!');
  });
});

describe('ERP parsing', () => {
  it('takes the delivery id from webhook-id', () => {
    const request = signed(customer('1'));
    const result = erpConnector.parse(request, settings());
    expect(result).toMatchObject({ kind: 'events', topic: 'customer.upserted', deliveryId: request.headers['webhook-id'] });
  });

  it("refuses an event whose source differs from the connector's configured source", () => {
    const result = erpConnector.parse(signed(customer('1', 'netsuite')), settings());
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && result.fields).toEqual({ 'record.source': [expect.stringMatching(/must be "api"/)] });
    expect(erpConnector.parse(signed(customer('1', 'netsuite')), settings({ source: 'netsuite' })).kind).toBe('events');
  });

  it('fills connector and record.source when absent, refuses another connector', () => {
    const bare = { ...customer('1'), connector: undefined, record: { kind: 'customer', external_id: 'C-1' } };
    const events = erpConnector.parse(signed(bare), settings({ source: 'xero' }));
    expect(events).toMatchObject({ kind: 'events', events: [{ connector: 'erp', record: { source: 'xero' } }] });
    const foreign = erpConnector.parse(signed({ ...customer('1'), connector: 'shopify' }), settings());
    expect(foreign).toMatchObject({ kind: 'invalid', fields: { connector: [expect.stringMatching(/erp/)] } });
  });

  it('splits a batch: valid events are returned, invalid ones rejected with index, fields and raw', () => {
    const bad = { ...customer('2'), data: { name: 'x', tax_exempt: 'yes' } };
    const foreign = customer('3', 'shopify');
    const body = [customer('1'), bad, foreign, 42, customer('5')];
    const result = erpConnector.parse(signed(body), settings());
    if (result.kind !== 'events') throw new Error(`expected events, got ${result.kind}`);
    expect(result.topic).toBe('batch');
    expect(result.events.map((e) => e.id)).toEqual(['1', '5']);
    expect(result.rejected).toEqual([
      { index: 1, message: expect.stringMatching(/data\.tax_exempt/), fields: { 'data.tax_exempt': [expect.any(String)] }, raw: bad },
      { index: 2, message: expect.stringMatching(/record\.source/), fields: { 'record.source': [expect.any(String)] }, raw: foreign },
      { index: 3, message: expect.any(String), fields: { '(event)': ['must be a JSON object'] }, raw: 42 },
    ]);
  });

  it('is invalid when no event of a batch is valid, naming each failure by index', () => {
    const result = erpConnector.parse(signed([customer('1', 'stripe'), { id: 'x' }]), settings());
    expect(result.kind).toBe('invalid');
    const fields = result.kind === 'invalid' ? (result.fields ?? {}) : {};
    expect(Object.keys(fields)).toEqual(expect.arrayContaining(['[0].record.source', '[1].type']));
    expect(result).toMatchObject({ message: expect.stringMatching(/none of the 2 events/) });
  });

  it('is invalid for malformed JSON, an empty batch and a body that is neither object nor array', () => {
    expect(erpConnector.parse(signed('{"id": '), settings())).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/JSON/) });
    expect(erpConnector.parse(signed([]), settings())).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/no events/) });
    expect(erpConnector.parse(signed('"text"'), settings()).kind).toBe('invalid');
  });

  it('keeps amounts exact and writes them back as decimal strings', () => {
    const refund = {
      id: 'r1',
      type: 'refund.created',
      occurred_at: '2026-11-20T09:00:00Z',
      record: { kind: 'transaction', external_id: 'refund-CN-1' },
      data: { invoice_external_id: 'INV-1', issued_at: '2026-11-20T09:00:00Z', currency: 'KWD', amount: '0.125', tax_amount: '0.0060' },
    };
    const result = erpConnector.parse(signed(refund), settings());
    expect(JSON.parse(JSON.stringify(result.kind === 'events' ? result.events : []))).toMatchObject([{ data: { amount: '0.125', tax_amount: '0.006' } }]);
  });
});

it('parses the fixtures batch with one bad event into its rejected part too', () => {
  const fixture = JSON.parse(readFileSync(new URL('../../fixtures/connectors/erp/batch-one-bad-event.json', import.meta.url), 'utf8')) as { body: unknown[] };
  const result: ParseResult = erpConnector.parse(signed(fixture.body), settings());
  expect(result).toMatchObject({
    kind: 'events',
    rejected: [{ index: 1, fields: { 'data.amount': [expect.any(String)] }, raw: fixture.body[1] }],
  });
});
