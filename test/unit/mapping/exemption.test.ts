import { describe, expect, it } from 'vitest';
import type { ExemptionRequest } from '../../../src/api/schemas/tax-engine.js';
import { mapExemption, mapExemptionCancelled, type ExemptionContext } from '../../../src/mapping/exemption.js';
import { ctx, exemptionData, invalidFields, sent } from './helpers.js';

const CUSTOMER_ID = '3b1f0c9e-2d4a-4e6b-8f7c-1a2b3c4d5e6f';
const CERTIFICATE_ID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const ex = (customerId: string | null = CUSTOMER_ID): ExemptionContext => ({
  ...ctx('exemption', 'EX-77'),
  ...(customerId === null ? {} : { customerId }),
});

describe('mapExemption', () => {
  it('maps the documented example field by field (docs/mapping.md, "Exemption")', () => {
    const data = exemptionData({ customer_external_id: 'C-2001', country: 'US', jurisdictions: ['CA'], start_date: '2026-01-01', exemption_type: 'full', certificate_id: CERTIFICATE_ID });
    expect(sent(mapExemption(data, ex()), 'exemption')).toEqual({
      customer_id: CUSTOMER_ID,
      country: 'US',
      jurisdictions: ['CA'],
      start_date: '2026-01-01',
      end_date: null,
      certificate_id: CERTIFICATE_ID,
      exemption_type: 'full',
      exemption_status: 'active',
    } satisfies ExemptionRequest);
  });

  it('sends an empty jurisdiction list (the whole country) and an end date when given', () => {
    const body = sent(mapExemption(exemptionData({ end_date: '2026-12-31', exemption_type: 'partial' }), ex()), 'exemption');
    expect(body).toMatchObject({ jurisdictions: [], end_date: '2026-12-31', exemption_type: 'partial' });
  });

  it('waits while its customer is not in the tax engine', () => {
    expect(mapExemption(exemptionData(), ex(null))).toEqual({
      kind: 'wait',
      reason: 'exemption EX-77 waits for its customer C-1 (source api) to exist in the tax engine',
    });
  });

  it('leaves out a certificate id that is not a UUID and says so in a note', () => {
    const result = mapExemption(exemptionData({ certificate_id: 'CERT-2026-001' }), ex());
    expect(sent(result, 'exemption')).not.toHaveProperty('certificate_id');
    expect(result.kind === 'send' && result.notes).toEqual(['certificate_id "CERT-2026-001" not sent: the tax engine takes a UUID there']);
  });

  it('sends exemption_status cancelled when the source says so', () => {
    expect(sent(mapExemption(exemptionData({ status: 'cancelled' }), ex()), 'exemption').exemption_status).toBe('cancelled');
  });

  it('refuses an end date before the start date, naming it', () => {
    expect(invalidFields(mapExemption(exemptionData({ start_date: '2026-06-01', end_date: '2026-05-31' }), ex()))).toEqual({
      end_date: ['2026-05-31 is before start_date 2026-06-01'],
    });
  });

  it('refuses a customer id that is not a UUID, naming it', () => {
    expect(invalidFields(mapExemption(exemptionData(), ex('cus_123'))).customer_id).toBeDefined();
  });

  it('never puts source or external_id in the body (the engine keys exemptions by its own id)', () => {
    const body = sent(mapExemption(exemptionData(), ex()), 'exemption');
    expect(body).not.toHaveProperty('source');
    expect(body).not.toHaveProperty('external_id');
  });
});

describe('mapExemptionCancelled', () => {
  const previous = exemptionData({ jurisdictions: ['CA', 'NV'], end_date: '2027-01-01' });

  it('sends the previous exemption cancelled, keeping its scope against the defaults of a partial event', () => {
    const body = sent(mapExemptionCancelled({ jurisdictions: [], end_date: null, status: 'active' }, { ...ex(), previous }), 'exemption');
    expect(body).toMatchObject({ jurisdictions: ['CA', 'NV'], end_date: '2027-01-01', exemption_status: 'cancelled' });
  });

  it('ignores the cancellation of an exemption taxsync never held', () => {
    expect(mapExemptionCancelled({}, ex()).kind).toBe('ignore');
  });

  it('waits for the customer like an upsert', () => {
    expect(mapExemptionCancelled({}, { ...ex(null), previous }).kind).toBe('wait');
  });
});
