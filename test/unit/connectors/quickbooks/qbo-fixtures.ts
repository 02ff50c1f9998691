import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { Money, formatDecimal } from '../../../../src/domain/money.js';
import type { QuickBooksMapResult } from '../../../../src/connectors/quickbooks/map.js';

/** The QuickBooks fixtures of docs/research/accounting-payloads.md, read as they are on disk. */
const ROOT = new URL('../../../fixtures/accounting/quickbooks/', import.meta.url);

export interface WebhookFixture {
  headers: Record<string, string>;
  receivedAt: string;
  secret: string;
  rawBody: string;
  body: unknown;
}

export function webhookFixture(name: string): WebhookFixture {
  return JSON.parse(readFileSync(new URL(`webhooks/${name}`, ROOT), 'utf8')) as WebhookFixture;
}

/** The answer body of the n-th exchange of an API fixture. */
export function apiAnswer(name: string, exchange = 0): unknown {
  const fixture = JSON.parse(readFileSync(new URL(`api/${name}`, ROOT), 'utf8')) as { exchanges: { response: { body: unknown } }[] };
  return fixture.exchanges[exchange]!.response.body;
}

/** A decimal as the wire writes it ("275.00" → "275"), so hand-written amounts read as on paper. */
export const n = (text: string): string => formatDecimal(new Money(text));

/** The wire form of a mapped event, as much of it as the tests read. */
export interface WireEvent {
  id: string;
  type: string;
  occurred_at: string;
  precedence?: number;
  version?: number;
  final?: boolean;
  connector: string;
  record: { kind: string; source: string; external_id: string };
  data: Record<string, unknown> & {
    lines?: Record<string, unknown>[];
    customer?: Record<string, unknown>;
  };
}

/** The events of a result on the wire (amounts as decimal strings); fails the test on anything else. */
export function wire(result: QuickBooksMapResult): WireEvent[] {
  if (result.kind !== 'events') throw new Error(`expected events, got ${result.kind}: ${'message' in result ? result.message : result.reason}`);
  return JSON.parse(JSON.stringify(result.events)) as WireEvent[];
}

export function only(result: QuickBooksMapResult): WireEvent {
  const events = wire(result);
  expect(events).toHaveLength(1);
  return events[0]!;
}
