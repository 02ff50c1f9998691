import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { describeNamedRecord, namedConnection, recordOfArguments } from '../../../src/cli/connection-option.js';
import { shopConnections } from '../../helpers/shops-de-fr-operator-fixtures.js';

const connections = shopConnections();
const record = (first: string, id: string) => {
  const { source, external_id, connection } = recordOfArguments(connections, first, id);
  return { source, external_id, connection: connection?.id };
};

describe("a record named as '<connection or source> <id>'", () => {
  it("by a connection: its source, and its prefix in front of the platform's id (once)", () => {
    expect(record('shop-fr', '1001')).toEqual({ source: 'woocommerce', external_id: 'fr-1001', connection: 'shop-fr' });
    // The prefix is always put in front: the platform's id, never a stored one.
    expect(record('shop-fr', 'fr-1001')).toEqual({ source: 'woocommerce', external_id: 'fr-fr-1001', connection: 'shop-fr' });
    expect(record('shop-de', '1001')).toEqual({ source: 'woocommerce', external_id: '1001', connection: 'shop-de' });
    expect(record('erp', 'INV-1')).toEqual({ source: 'api', external_id: 'INV-1', connection: 'erp' });
  });

  it('by a source, as before connections: the id as stored', () => {
    expect(record('woocommerce', '1001')).toEqual({ source: 'woocommerce', external_id: '1001', connection: 'woocommerce' });
    expect(record('api', 'INV-1')).toEqual({ source: 'api', external_id: 'INV-1', connection: undefined });
    expect(record('woocommerce', 'fr-1001')).toEqual({ source: 'woocommerce', external_id: 'fr-1001', connection: 'woocommerce' });
  });

  it('is said back with the connection only when a connection named it', () => {
    expect(describeNamedRecord('shop-fr', recordOfArguments(connections, 'shop-fr', '1001'))).toBe('woocommerce/fr-1001 (connection shop-fr)');
    expect(describeNamedRecord('erp', recordOfArguments(connections, 'erp', 'INV-1'))).toBe('api/INV-1 (connection erp)');
    expect(describeNamedRecord('woocommerce', recordOfArguments(connections, 'woocommerce', '1001'))).toBe('woocommerce/1001');
    expect(describeNamedRecord('api', recordOfArguments(connections, 'api', 'INV-1'))).toBe('api/INV-1');
  });

  it('--connection names an existing connection, or the error lists them', () => {
    expect(namedConnection(connections, 'shop-fr').externalIdPrefix).toBe('fr-');
    expect(() => namedConnection(connections, 'shop-it')).toThrow(/no connection "shop-it": the connections are shop-de, shop-fr, shopify/);
  });
});

describe('the record-level commands', () => {
  const program = buildProgram();
  const command = (...path: string[]) => path.reduce((at, name) => at.commands.find((c) => c.name() === name)!, program);

  it('trace and resend take a connection or a source, then the id', () => {
    for (const name of ['trace', 'resend']) expect(command(name).registeredArguments.map((a) => a.name())).toEqual(['connection|source', 'external_id']);
  });

  it('dlq list, stats, export, replay, discard and prune, and variance, take --connection', () => {
    for (const path of [['dlq', 'list'], ['dlq', 'stats'], ['dlq', 'export'], ['dlq', 'replay'], ['dlq', 'discard'], ['dlq', 'prune'], ['variance']]) {
      expect(command(...path).options.map((o) => o.long), path.join(' ')).toContain('--connection');
    }
  });
});
