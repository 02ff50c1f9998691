import { describe, expect, it } from 'vitest';
import { noticeKey, xeroNotices } from '../../../../src/connectors/xero/map.js';
import { XeroWebhookPayload } from '../../../../src/connectors/xero/schemas.js';
import { webhookFixture } from './helpers.js';

/** A delivery carries ids only: each event becomes a notice for a fetch job, or is skipped with its reason. */

const TENANT = 'c2cc9b6e-9458-4c7d-93cc-f02b81b0594f';
const INVOICE = 'a03ffcd2-5d91-4c7e-b483-318584e9e439';
const CONTACT = '430fa14a-f945-44d3-9f97-5df5e28441b8';

const payload = (name: string) => XeroWebhookPayload.parse(webhookFixture(name).body);

function event(overrides: Record<string, unknown> = {}) {
  return {
    resourceUrl: `https://api.xero.com/api.xro/2.0/Invoices/${INVOICE}`,
    resourceId: INVOICE,
    eventDateUtc: '2026-11-16T02:14:09.923',
    eventType: 'UPDATE',
    eventCategory: 'INVOICE',
    tenantId: TENANT,
    tenantType: 'ORGANISATION',
    ...overrides,
  };
}

const delivery = (...events: unknown[]) => XeroWebhookPayload.parse({ events, firstEventSequence: 1, lastEventSequence: events.length, entropy: 'X' });

describe('xeroNotices', () => {
  it('turns the invoice and contact events of one delivery into three notices, times read as UTC', () => {
    expect(xeroNotices(payload('real-invoice-and-contact-events'))).toEqual({
      notices: [
        { tenantId: TENANT, category: 'INVOICE', collection: 'Invoices', resourceId: INVOICE, eventType: 'CREATE', occurredAt: '2026-11-16T02:14:09.923Z' },
        { tenantId: TENANT, category: 'INVOICE', collection: 'Invoices', resourceId: INVOICE, eventType: 'UPDATE', occurredAt: '2026-11-16T02:15:41.107Z' },
        { tenantId: TENANT, category: 'CONTACT', collection: 'Contacts', resourceId: CONTACT, eventType: 'UPDATE', occurredAt: '2026-11-16T02:15:41.902Z' },
      ],
      skipped: [],
    });
  });

  it('reads a sales credit note event', () => {
    expect(xeroNotices(payload('real-creditnote-event')).notices).toEqual([
      { tenantId: TENANT, category: 'CREDITNOTE', collection: 'CreditNotes', resourceId: '249f15fa-f2a7-4acc-8769-0984103f2225', eventType: 'CREATE', occurredAt: '2026-11-18T00:44:09.923Z' },
    ]);
  });

  it('finds nothing in an Intent to Receive request', () => {
    expect(xeroNotices(payload('real-intent-to-receive-correctly-signed'))).toEqual({ notices: [], skipped: [] });
  });

  it('skips what it does not read, with a reason, and keeps the events beside it', () => {
    const result = xeroNotices(
      delivery(
        event({ eventCategory: 'SUBSCRIPTION', tenantType: 'APPLICATION' }),
        event({ eventCategory: 'BANKTRANSACTION' }),
        event({ resourceId: undefined }),
        event({ eventCategory: 'CREDITNOTE', data: { Type: 'ACCPAYCREDIT', Status: 'AUTHORISED' } }),
        event({ resourceId: '../Organisation' }),
        event({ eventDateUtc: 'yesterday' }),
        'not an object',
        event(),
      ),
    );
    expect(result.notices).toHaveLength(1);
    expect(result.skipped.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const reasons = result.skipped.map((s) => s.reason);
    expect(reasons[0]).toMatch(/SUBSCRIPTION/);
    expect(reasons[1]).toMatch(/BANKTRANSACTION is not one taxsync reads/);
    expect(reasons[2]).toMatch(/events\[2\]\.resourceId/);
    expect(reasons[3]).toMatch(/ACCPAYCREDIT/);
    expect(reasons[4]).toMatch(/not a Xero id/);
    expect(reasons[5]).toMatch(/events\[5\]\.eventDateUtc/);
  });

  it('keeps an event type Xero may add later: the fetch reads the current state whatever it says', () => {
    expect(xeroNotices(delivery(event({ eventType: 'DELETE' }))).notices[0]?.eventType).toBe('DELETE');
  });

  it('keeps only the organisations the connection reads, when it names them', () => {
    const other = '11111111-2222-4333-8444-555555555555';
    const result = xeroNotices(delivery(event(), event({ tenantId: other })), { tenants: [TENANT.toUpperCase()] });
    expect(result.notices.map((n) => n.tenantId)).toEqual([TENANT]);
    expect(result.skipped).toEqual([{ index: 1, reason: `tenant ${other} is not an organisation this connection reads` }]);
  });

  it('lowercases the resource id, as the records are keyed', () => {
    expect(xeroNotices(delivery(event({ resourceId: INVOICE.toUpperCase() }))).notices[0]?.resourceId).toBe(INVOICE);
  });

  it('gives the CREATE and the UPDATE of one invoice different keys, and a retried event the same one', () => {
    const [create, update] = xeroNotices(payload('real-invoice-and-contact-events')).notices;
    expect(noticeKey(create!)).not.toBe(noticeKey(update!));
    expect(noticeKey(xeroNotices(payload('real-invoice-and-contact-events')).notices[0]!)).toBe(noticeKey(create!));
  });
});
