import { describe, expect, it } from 'vitest';
import { quickBooksCreditApplications, quickBooksNotices, type QuickBooksNoticesResult } from '../../../../src/connectors/quickbooks/map.js';
import { QboPaymentAnswer } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, webhookFixture } from './qbo-fixtures.js';

const RECEIVED = new Date('2026-11-18T17:07:41Z');

function notices(body: unknown, realms?: string[]) {
  const result: QuickBooksNoticesResult = quickBooksNotices(body, { receivedAt: RECEIVED, ...(realms && { realms }) });
  if (result.kind !== 'notices') throw new Error(`expected notices: ${result.message}`);
  return result;
}

const cloudEvent = (type: string, overrides: Record<string, unknown> = {}) => ({
  specversion: '1.0',
  id: `evt-${type}`,
  source: 'intuit.abc=',
  type,
  time: '2026-11-18T17:02:11.517203311Z',
  intuitentityid: '231',
  intuitaccountid: '9341453080914477',
  data: {},
  ...overrides,
});

describe('classic notifications', () => {
  it('give one notice per entity: invoice update, void and delete, a refund receipt, a customer merge', () => {
    const result = notices(webhookFixture('real-legacy-invoice-update-void-delete-merge.json').body);
    expect(result.format).toBe('classic');
    expect(result.skipped).toEqual([]);
    expect(result.notices.map((x) => [x.entity, x.id, x.operation, x.occurredAt])).toEqual([
      ['Invoice', '130', 'Update', '2026-11-18T17:02:11Z'],
      ['Invoice', '264', 'Void', '2026-11-18T17:03:56Z'],
      ['Invoice', '266', 'Delete', '2026-11-18T17:04:35Z'],
      ['RefundReceipt', '247', 'Create', '2026-11-18T17:05:02Z'],
      ['Customer', '15', 'Merge', '2026-11-18T17:06:40Z'],
    ]);
    expect(result.notices.every((x) => x.realmId === '1185883450')).toBe(true);
    // The merge names the customer merged away: the pipeline deletes it and reads the survivor.
    expect(result.notices[4]).toMatchObject({ mergedAwayId: '58' });
    expect(result.notices[0]!.noticeId).toBe('1185883450:Invoice:130:Update:2026-11-18T17:02:11Z');
  });

  it('read lastUpdated written with an offset without a colon (the documented sample)', () => {
    const result = notices(webhookFixture('real-legacy-java-sdk-test-vector.json').body);
    // 14:42:19 at −07:00 is 21:42:19 UTC.
    expect(result.notices).toEqual([expect.objectContaining({ entity: 'Customer', id: '1', operation: 'Create', occurredAt: '2015-10-05T21:42:19Z' })]);
  });

  it('skip the entities taxsync does not read, with the reason', () => {
    const result = notices(webhookFixture('real-legacy-dotnet-sdk-test-vector.json').body);
    expect(result.notices.map((x) => `${x.entity} ${x.id}`)).toEqual(['Customer 43']);
    expect(result.skipped).toEqual([{ realmId: '1269959970', entity: 'Vendor', id: '40', operation: 'Update', reason: 'QuickBooks Vendor records are not read by taxsync' }]);
  });

  it('skip Emailed (no data changed), unknown operations and realms taxsync is not connected to', () => {
    const entity = (name: string, operation: string) => ({ name, id: '7', operation, lastUpdated: '2026-11-18T17:02:11.000Z' });
    const body = {
      eventNotifications: [
        { realmId: '1', dataChangeEvent: { entities: [entity('Invoice', 'Emailed'), entity('Invoice', 'Archive'), entity('Payment', 'Create')] } },
        { realmId: '2', dataChangeEvent: { entities: [entity('Invoice', 'Update')] } },
      ],
    };
    const result = notices(body, ['1']);
    expect(result.notices.map((x) => `${x.entity} ${x.operation}`)).toEqual(['Payment Create']);
    expect(result.skipped.map((x) => x.reason)).toEqual([
      'an Emailed notice changes nothing taxsync reads',
      'operation "Archive" is not one taxsync knows (Create, Update, Delete, Merge, Void)',
      'realm 2 is not a company taxsync is connected to',
    ]);
  });
});

describe('CloudEvents deliveries', () => {
  it('give notices across realms, with the CloudEvent id for dedupe and nanoseconds cut to milliseconds', () => {
    const result = notices(webhookFixture('real-cloudevents-batch-two-realms.json').body);
    expect(result.format).toBe('cloudevents');
    expect(result.notices).toEqual([
      { realmId: '1185883450', entity: 'Invoice', id: '271', operation: 'Create', occurredAt: '2026-11-17T18:40:53.114Z', noticeId: '88cd52aa-33b6-4351-9aa4-47572edbd068' },
      { realmId: '1185883450', entity: 'Invoice', id: '130', operation: 'Update', occurredAt: '2026-11-18T17:02:11.517Z', noticeId: '3c9e7b21-8f4d-4a6e-b5c0-7d1e2f3a4b5c' },
      { realmId: '9341453080914477', entity: 'Customer', id: '17', operation: 'Update', occurredAt: '2026-11-18T17:03:02.004Z', noticeId: '1f6a5c3e-2b7d-4e90-a1c4-6d8e9f0a2b3c' },
    ]);
    expect(result.skipped).toEqual([expect.objectContaining({ entity: 'class', id: '1234', reason: 'QuickBooks class records are not read by taxsync' })]);
  });

  it('accept the unconfirmed words and casings for two-word entities, delete, void and merge', () => {
    const body = [
      cloudEvent('qbo.creditmemo.created.v1'),
      cloudEvent('qbo.CreditMemo.voided.v1'),
      cloudEvent('qbo.refund_receipt.deleted.v1'),
      cloudEvent('qbo.customer.merged.v1', { intuitentityid: '15', data: { deletedId: '58' } }),
      cloudEvent('qbo.salesreceipt.updated'),
    ];
    const result = notices(body);
    expect(result.notices.map((x) => `${x.entity} ${x.operation}${x.mergedAwayId ? ` ${x.mergedAwayId}` : ''}`)).toEqual([
      'CreditMemo Create',
      'CreditMemo Void',
      'RefundReceipt Delete',
      'Customer Merge 58',
      'SalesReceipt Update',
    ]);
  });

  it('take the time of receipt for an event without time (optional in CloudEvents), and read a lone event as a batch', () => {
    const { time: _time, ...untimed } = cloudEvent('qbo.invoice.updated.v1');
    expect(notices(untimed).notices).toEqual([expect.objectContaining({ entity: 'Invoice', id: '231', occurredAt: '2026-11-18T17:07:41Z' })]);
  });

  it('skip a type that is not qbo.<entity>.<operation>', () => {
    const result = notices([cloudEvent('com.example.other')]);
    expect(result.notices).toEqual([]);
    expect(result.skipped[0]!.reason).toBe('CloudEvent type com.example.other is not qbo.<entity>.<operation>');
  });
});

describe('what is not a notice', () => {
  it.each([
    ['an object of neither format', { hello: 'world' }, 'eventNotifications'],
    ['a CloudEvent without its realm', [{ id: 'e', type: 'qbo.invoice.created.v1', intuitentityid: '1' }], '[0].intuitaccountid'],
    ['an unreadable lastUpdated', { eventNotifications: [{ realmId: '1', dataChangeEvent: { entities: [{ name: 'Invoice', id: '1', operation: 'Update', lastUpdated: 'yesterday' }] } }] }, 'eventNotifications[0].dataChangeEvent.entities[0].lastUpdated'],
  ])('is invalid, naming the field: %s', (_what, body, field) => {
    const result = quickBooksNotices(body, { receivedAt: RECEIVED });
    expect(result.kind).toBe('invalid');
    if (result.kind === 'invalid') expect(Object.keys(result.fields)).toContain(field);
  });
});

describe('credit applications', () => {
  it('read from the zero Payment that applies credit memo 231 to invoice 192', () => {
    const payment = QboPaymentAnswer.parse(apiAnswer('real-creditmemo-au-applied-through-zero-payment.json', 1)).Payment;
    // TotalAmt is not read (the schema keeps it unchecked): the fixture's own value, exactly.
    expect(payment.TotalAmt).toBe(0);
    expect(quickBooksCreditApplications(payment)).toEqual([{ creditMemoId: '231', invoiceIds: ['192'] }]);
  });

  it('give every invoice of a Payment to each credit memo it applies (the Payment does not pair them)', () => {
    const link = (TxnId: string, TxnType: string) => ({ Amount: 10, LinkedTxn: [{ TxnId, TxnType }] });
    const payment = QboPaymentAnswer.parse({ Payment: { Id: '9', TotalAmt: 5, Line: [link('1', 'Invoice'), link('2', 'Invoice'), link('3', 'CreditMemo')] } }).Payment;
    expect(quickBooksCreditApplications(payment)).toEqual([{ creditMemoId: '3', invoiceIds: ['1', '2'] }]);
  });
});
