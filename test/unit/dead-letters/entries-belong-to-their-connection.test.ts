import { describe, expect, it } from 'vitest';
import { DeadLetterEntry } from '../../../src/queue/dead-letter.js';
import { belongsToConnection, describeFilter, entryConnection, isEmptyFilter, matchesFilter, parseFilter } from '../../../src/dead-letters/filter.js';
import { failedInvoice, shopInvoice, shopConnections, unreadableDelivery } from '../../helpers/shops-de-fr-operator-fixtures.js';

const entry = (e: ReturnType<typeof failedInvoice>): DeadLetterEntry => DeadLetterEntry.parse({ ...e, v: 1 });

const connections = shopConnections();
const de = entry(failedInvoice('de', shopInvoice('shop-de', '1001')));
const fr = entry(failedInvoice('fr', shopInvoice('shop-fr', 'fr-1001')));
const frDelivery = entry(unreadableDelivery('fr-raw', 'shop-fr'));
// An event from a file ingest names no connection: its record says whose it is.
const frFromFile = entry(failedInvoice('fr-file', shopInvoice('ingest', 'fr-1002')));
const erp = entry({ ...failedInvoice('erp', shopInvoice('erp', 'INV-1', 'api')), event: null });
const all = [de, fr, frDelivery, frFromFile, erp];
const ids = (filter: ReturnType<typeof parseFilter>) => all.filter((e) => matchesFilter(e, filter)).map((e) => e.id);

describe('dead letters of a connection', () => {
  it("are its deliveries, its events and its records, and no other shop's with the same order number", () => {
    expect(ids(parseFilter({ connection: 'shop-fr' }, connections))).toEqual(['fr', 'fr-raw', 'fr-file']);
    expect(ids(parseFilter({ connection: 'shop-de' }, connections))).toEqual(['de']);
    expect(ids(parseFilter({ connection: 'erp' }, connections))).toEqual(['erp']);
    // Combined with the other filters like any of them.
    expect(ids(parseFilter({ connection: 'shop-fr', queue: 'ingest' }, connections))).toEqual(['fr-raw']);
    expect(ids(parseFilter({ connection: 'shop-fr', externalId: '1001' }, connections))).toEqual([]);
  });

  it('is a filter: not empty, and said in the audit log by its id', () => {
    const filter = parseFilter({ connection: 'shop-fr' }, connections);
    expect(isEmptyFilter(filter)).toBe(false);
    expect(describeFilter(filter)).toEqual({ connection: 'shop-fr' });
  });

  it('refuses a connection that does not exist, naming the ones there are', () => {
    expect(() => parseFilter({ connection: 'shop-it' }, connections)).toThrow('no connection "shop-it": the connections are shop-de, shop-fr, shopify, stripe, woocommerce, erp');
  });

  it('without the connections, goes by the connector an event or a delivery names', () => {
    expect(ids(parseFilter({ connection: 'shop-fr' }))).toEqual(['fr', 'fr-raw']);
    expect(ids(parseFilter({ connection: 'shop-it' }))).toEqual([]);
    expect(belongsToConnection(frFromFile, { id: 'shop-fr' })).toBe(false);
    expect(belongsToConnection(frFromFile, { id: 'shop-fr', connections })).toBe(true);
  });

  it('shows each entry under one connection: the receiving one, else its record’s', () => {
    expect(all.map((e) => entryConnection(e, connections))).toEqual(['shop-de', 'shop-fr', 'shop-fr', 'shop-fr', 'erp']);
    expect(all.map((e) => entryConnection(e))).toEqual(['shop-de', 'shop-fr', 'shop-fr', 'ingest', undefined]);
    // A record no connection writes (another source) is shown under none.
    expect(entryConnection({ ...erp, record: { kind: 'customer', source: 'legacy', external_id: 'C-1' } }, connections)).toBeUndefined();
  });
});
