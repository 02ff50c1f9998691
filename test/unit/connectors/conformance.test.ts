import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { CONNECTORS } from '../../../src/connectors/registry.js';
import type { ConnectorSettings, WebhookRequest } from '../../../src/connectors/types.js';

interface Fixture {
  description: string;
  headers: Record<string, string>;
  contentType?: string;
  receivedAt: string;
  body: unknown;
  settings?: { source?: string; toleranceSeconds?: number };
  expect: { kind: 'events' | 'ignored' | 'invalid' | 'ping'; deliveryId?: string; events?: unknown[]; field?: string };
}

const SECRET = 'conformance-test-secret';
const fixturesRoot = new URL('../../fixtures/connectors/', import.meta.url);

function loadFixtures(id: string): [string, Fixture][] {
  const dir = new URL(`${id}/`, fixturesRoot);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture]);
}

function rawBody(fixture: Fixture): Buffer {
  return Buffer.from(typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body));
}

function request(fixture: Fixture, body: Buffer, signed: Record<string, string>, receivedAt = new Date(fixture.receivedAt)): WebhookRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...fixture.headers, ...signed })) headers[k.toLowerCase()] = v;
  return { headers, rawBody: body, contentType: fixture.contentType ?? 'application/json', receivedAt };
}

for (const [id, connector] of Object.entries(CONNECTORS)) {
  const settings = (fixture: Fixture, secrets = [SECRET]): ConnectorSettings => ({
    source: fixture.settings?.source ?? connector.defaultSource,
    secrets: secrets.map((s) => new Secret(s)),
    toleranceSeconds: fixture.settings?.toleranceSeconds ?? 300,
  });

  describe(`connector ${id}`, () => {
    const fixtures = loadFixtures(id);

    it('has fixtures', () => {
      expect(fixtures.length).toBeGreaterThan(0);
    });

    for (const [file, fixture] of fixtures) {
      describe(`${file}: ${fixture.description}`, () => {
        const body = rawBody(fixture);
        const when = new Date(fixture.receivedAt);

        if (fixture.expect.kind === 'ping') {
          it('is answered as a ping without a signature', () => {
            expect(connector.isPing?.(request(fixture, body, {}))).toBe(true);
          });
          return;
        }

        it('accepts a valid signature', () => {
          const req = request(fixture, body, connector.sign(body, SECRET, when));
          expect(connector.isPing?.(req) ?? false).toBe(false);
          expect(connector.verify(req, settings(fixture))).toEqual({ ok: true });
        });

        it('accepts the signature of any configured secret (rotation)', () => {
          const req = request(fixture, body, connector.sign(body, SECRET, when));
          expect(connector.verify(req, settings(fixture, ['retired-secret', SECRET]))).toEqual({ ok: true });
        });

        it('rejects a tampered body', () => {
          const tampered = Buffer.concat([body, Buffer.from(' ')]);
          const req = request(fixture, tampered, connector.sign(body, SECRET, when));
          expect(connector.verify(req, settings(fixture)).ok).toBe(false);
        });

        it('rejects a wrong secret and a missing signature, without echoing either', () => {
          const signed = connector.sign(body, 'wrong-secret', when);
          const result = connector.verify(request(fixture, body, signed), settings(fixture));
          expect(result.ok).toBe(false);
          const reason = result.ok ? '' : result.reason;
          for (const value of Object.values(signed)) if (value.length > 12) expect(reason).not.toContain(value);
          expect(reason).not.toContain(SECRET);
          expect(connector.verify(request(fixture, body, {}), settings(fixture)).ok).toBe(false);
        });

        it.runIf(connector.signsTimestamp)('rejects a signed timestamp outside the tolerance, past or future', () => {
          for (const offset of [-301_000, 301_000]) {
            const signed = connector.sign(body, SECRET, new Date(when.getTime() + offset));
            expect(connector.verify(request(fixture, body, signed, when), settings(fixture)).ok).toBe(false);
          }
        });

        it(`parses to ${fixture.expect.kind}`, () => {
          const req = request(fixture, body, connector.sign(body, SECRET, when));
          const result = connector.parse(req, settings(fixture));
          expect(result.kind).toBe(fixture.expect.kind);
          if (fixture.expect.deliveryId !== undefined) expect('deliveryId' in result ? result.deliveryId : undefined).toBe(fixture.expect.deliveryId);
          if (result.kind === 'events') {
            expect(JSON.parse(JSON.stringify(result.events))).toEqual(fixture.expect.events);
          }
          if (result.kind === 'invalid' && fixture.expect.field !== undefined) {
            expect(Object.keys(result.fields ?? {}).join(' ') + result.message).toContain(fixture.expect.field);
          }
        });

        it('parses the same delivery to the same event ids (stable ids)', () => {
          const req = request(fixture, body, connector.sign(body, SECRET, when));
          const a = connector.parse(req, settings(fixture));
          const b = connector.parse(req, settings(fixture));
          expect(a).toEqual(b);
        });
      });
    }
  });
}

it('every fixture folder belongs to a registered connector', () => {
  const folders = readdirSync(fixturesRoot, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  expect(folders.filter((f) => !(f in CONNECTORS))).toEqual([]);
});
