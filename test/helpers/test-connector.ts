import { Secret } from '../../src/domain/secret.js';
import { digestEquals, fromHex, hmacSha256 } from '../../src/connectors/shared/crypto.js';
import { parseJsonBody } from '../../src/connectors/shared/parse.js';
import { defineConnector, type ConnectorSettings } from '../../src/connectors/types.js';
import { CanonicalEvent } from '../../src/domain/events.js';

/**
 * A minimal connector for testing the webhook route itself: hex HMAC in `x-test-signature`, body
 * `{topic, delivery, events}` where events are canonical events in wire form.
 */
export const testConnector = defineConnector({
  id: 'test',
  secretVariable: 'TEST_WEBHOOK_SECRET',
  defaultSource: 'api',
  signsTimestamp: false,
  contentTypes: ['application/json'],
  verify(req, settings) {
    const received = fromHex(req.headers['x-test-signature'] ?? '');
    if (!received) return { ok: false, reason: 'missing or malformed x-test-signature' };
    const ok = settings.secrets.some((s) => digestEquals(hmacSha256(s.reveal(), req.rawBody), received));
    return ok ? { ok: true } : { ok: false, reason: 'no secret matches' };
  },
  parse(req) {
    const json = parseJsonBody(req.rawBody);
    if (!json.ok) return { kind: 'invalid', message: json.message };
    const body = json.value as { topic?: string; delivery?: string; events?: unknown[] };
    if (body.topic === 'ignore.me') return { kind: 'ignored', topic: body.topic, reason: 'not handled' };
    if (body.topic === 'throw') throw new Error('boom');
    const events = [];
    for (const [i, raw] of (body.events ?? []).entries()) {
      const parsed = CanonicalEvent.safeParse(raw);
      if (!parsed.success) return { kind: 'invalid', topic: body.topic, message: `events[${i}] invalid`, fields: { [`events[${i}]`]: ['bad'] } };
      events.push(parsed.data);
    }
    return { kind: 'events', topic: body.topic ?? 'x', deliveryId: body.delivery ?? 'none', events };
  },
  sign(rawBody, secret, _now: Date) {
    return { 'x-test-signature': hmacSha256(secret, rawBody).toString('hex') };
  },
});

export function testSettings(secret: string): ConnectorSettings {
  return { source: 'api', secrets: [new Secret(secret)], toleranceSeconds: 300 };
}
