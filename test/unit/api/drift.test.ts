import { describe, expect, it } from 'vitest';
import { MAX_FINDINGS_PER_ANSWER, detectDrift } from '../../../src/api/drift.js';
import { ExemptionListContract, RegistrationContract, TransactionContract } from '../../../src/api/schemas/index.js';
import { MAX_DRIFT_SERIES, createMetrics } from '../../../src/observability/metrics.js';

const ID = '5b0d6a8e-1c39-4f0e-9d2a-7a1f3c9e4b21';
const base = { id: ID, source: 'api', external_id: 'INV-1' };

describe('drift detection', () => {
  it('finds nothing in an answer that keeps to the contract', () => {
    expect(detectDrift(TransactionContract, { ...base, items: [{ unit_price: '1.00', tax: { total_tax: '0.08' } }], created_from: null })).toEqual([]);
  });

  it('names array items with [] and map keys with *, so paths stay few however long the answer', () => {
    const item = (due: unknown) => ({ unit_price: '1', jurisdiction_tax_breakdown: { state: { tax_due: due }, county: { tax_due: '0.01' } } });
    const drift = detectDrift(TransactionContract, { ...base, items: [item(0.05), item(0.07), item('0.02')] });

    expect(drift).toEqual([{ path: 'items[].jurisdiction_tax_breakdown.*.tax_due', kind: 'wrong_type' }]);
  });

  it('tells a null, a missing required field, an unlisted value and a wrong type apart', () => {
    const drift = detectDrift(RegistrationContract, { id: ID, status: 'suspended', number: 42, fiscal_representative_type: null, iban: null });

    expect(drift).toEqual(
      expect.arrayContaining([
        { path: 'registration_type', kind: 'missing' },
        { path: 'status', kind: 'unknown_enum' },
        { path: 'number', kind: 'wrong_type' },
      ]),
    );
    // Nulls the decisions allow (number, iban, a choice never set) are not drift.
    expect(drift).toHaveLength(3);
  });

  it('shows an added key by name only when it looks like a field name (a key can be data)', () => {
    const drift = detectDrift(TransactionContract, { ...base, 'ada@example.com': 1, warehouse_code: 'X' });

    expect(drift.map((d) => d.path).sort()).toEqual(['(key)', 'warehouse_code']);
  });

  it('compares a bare-array exemption list with the array form of the contract', () => {
    expect(detectDrift(ExemptionListContract, [{ id: ID, country: 'US' }])).toEqual([]);
    expect(detectDrift(ExemptionListContract, [{ id: ID, country: 'US', renewal: true }])).toEqual([{ path: '[].renewal', kind: 'extra' }]);
  });

  it('reports a body that is not an object at all as one finding', () => {
    expect(detectDrift(TransactionContract, 'OK')).toEqual([{ path: '(body)', kind: 'wrong_type' }]);
  });

  it(`keeps at most ${MAX_FINDINGS_PER_ANSWER} findings per answer`, () => {
    const extras = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field_${i}`, i]));

    expect(detectDrift(TransactionContract, { ...base, ...extras })).toHaveLength(MAX_FINDINGS_PER_ANSWER);
  });
});

describe('the drift counter', () => {
  it(`keeps at most ${MAX_DRIFT_SERIES} endpoint and path series, counting the rest as (other)`, async () => {
    const metrics = createMetrics({ defaultMetrics: false });

    for (let i = 0; i < MAX_DRIFT_SERIES + 30; i++) metrics.observeDrift({ endpoint: 'PUT /v1/transactions/', path: `field_${i}` });
    metrics.observeDrift({ endpoint: 'PUT /v1/transactions/', path: 'field_0' });

    const values = (await metrics.registry.getSingleMetric('taxsync_response_drift_total')!.get()).values;
    expect(values).toHaveLength(MAX_DRIFT_SERIES + 1);
    expect(values.find((v) => v.labels.path === '(other)')?.value).toBe(30);
    expect(values.find((v) => v.labels.path === 'field_0')?.value).toBe(2);
  });
});
