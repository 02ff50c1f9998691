import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { CanonicalEvent } from '../../../../src/domain/events.js';
import { Money } from '../../../../src/domain/money.js';
import { Secret } from '../../../../src/domain/secret.js';
import type { ConnectorSettings, WebhookRequest } from '../../../../src/connectors/types.js';
import type { XeroMapResult } from '../../../../src/connectors/xero/map.js';
import { readXeroItems, type XeroCollection } from '../../../../src/connectors/xero/schemas.js';

/** The Xero fixtures of docs/research/accounting-payloads.md, "Xero fixtures". */
const ROOT = new URL('../../../fixtures/accounting/xero/', import.meta.url);

export const FIXTURE_KEY = 'taxsync-fixture-xero-webhook-key';
export const SOURCE = 'xero';

export interface WebhookFixture {
  headers: Record<string, string>;
  contentType: string;
  receivedAt: string;
  secret: string;
  rawBody: string;
  body: { events: unknown[]; firstEventSequence: number; lastEventSequence: number; entropy: string };
  expectedResponse: { status: 200 | 401; body: string };
}

export interface ApiFixture {
  response: { body: Record<string, unknown> };
  handComputed: Record<string, unknown>;
}

export function webhookFixture(name: string): WebhookFixture {
  return JSON.parse(readFileSync(new URL(`webhooks/${name}.json`, ROOT), 'utf8')) as WebhookFixture;
}

export function apiFixture(name: string): ApiFixture {
  return JSON.parse(readFileSync(new URL(`api/${name}.json`, ROOT), 'utf8')) as ApiFixture;
}

export function request(fixture: WebhookFixture): WebhookRequest {
  return { headers: fixture.headers, rawBody: Buffer.from(fixture.rawBody, 'utf8'), contentType: fixture.contentType, receivedAt: new Date(fixture.receivedAt) };
}

export function settings(...keys: string[]): ConnectorSettings {
  return { source: SOURCE, secrets: keys.map((k) => new Secret(k)), toleranceSeconds: 300 };
}

/** The records of a list answer read with `schema`, each with its path; fails the test on a record that does not parse. */
export function records<T>(body: Record<string, unknown>, collection: XeroCollection, schema: z.ZodType<T>): { value: T; path: string }[] {
  return readXeroItems(collection, body[collection] as unknown[], schema).map((item) => {
    if (!item.ok) throw new Error(`fixture record ${item.path} does not parse: ${JSON.stringify(item.fields)}`);
    return { value: item.value, path: item.path };
  });
}

/** The wire form of the events (amounts as decimal strings), as JSON would carry them. */
export type Wire = Record<string, unknown> & {
  id: string;
  type: string;
  occurred_at: string;
  precedence?: number;
  final?: boolean;
  record: { kind: string; source: string; external_id: string };
  data: Record<string, unknown>;
};

export function events(result: XeroMapResult): CanonicalEvent[] {
  if (result.kind !== 'events') throw new Error(`expected events, got ${result.kind}: ${JSON.stringify(result)}`);
  return result.events;
}

export function wire(result: XeroMapResult): Wire[] {
  return JSON.parse(JSON.stringify(events(result))) as Wire[];
}

/** A decimal string equal, as a number, to the hand-computed one ("6" and "6.00"). */
export function expectAmount(actual: unknown, hand: string): void {
  expect(typeof actual, `expected an amount equal to ${hand}`).toBe('string');
  expect(new Money(actual as string).equals(new Money(hand)), `${String(actual)} should equal ${hand}`).toBe(true);
}
