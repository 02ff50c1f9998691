import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { VAT_SUBMISSION_OUTCOMES, createMetrics } from '../../src/observability/metrics.js';

describe('metrics', () => {
  it('counts API calls by endpoint name and status, with their latency', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.observeApiCall({ service: 'tax', endpoint: 'transactions.upsert', status: '201', seconds: 0.03 });
    metrics.observeApiCall({ service: 'tax', endpoint: 'transactions.upsert', status: 'API_TIMEOUT', seconds: 30 });
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_api_calls_total{service="tax",endpoint="transactions.upsert",status="201"} 1');
    expect(text).toContain('taxsync_api_calls_total{service="tax",endpoint="transactions.upsert",status="API_TIMEOUT"} 1');
    expect(text).toContain('taxsync_api_call_duration_seconds_bucket{le="0.05",service="tax",endpoint="transactions.upsert"} 1');
    expect(text).toContain('taxsync_api_call_duration_seconds_count{service="tax",endpoint="transactions.upsert"} 2');
  });

  it('counts a job that found nothing new as coalesced', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.observeJob('customers', 'nothing-new');
    metrics.observeJob('customers', 'applied');
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_jobs_total{queue="customers",outcome="nothing-new"} 1');
    expect(text).toContain('taxsync_jobs_total{queue="customers",outcome="applied"} 1');
    expect(text).toContain('taxsync_coalesced_events_total{queue="customers"} 1');
  });

  it('has no queue source until one is watched: the gauges are announced without samples', async () => {
    const text = await createMetrics({ defaultMetrics: false }).registry.metrics();
    expect(text).toContain('# TYPE taxsync_queue_jobs gauge');
    expect(text).not.toMatch(/^taxsync_queue_jobs\{/m);
  });

  it('reads TAXSYNC_METRICS_PORT, unset unless given', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ TAXSYNC_METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(() => loadConfig({ TAXSYNC_METRICS_PORT: 'ninety' })).toThrow(/TAXSYNC_METRICS_PORT/);
  });

  it('names every VAT submission outcome in the help text, the newer ones included', async () => {
    const text = await createMetrics({ defaultMetrics: false }).registry.metrics();
    const help = /^# HELP taxsync_vat_submissions_total (.*)$/m.exec(text)?.[1] ?? '';
    for (const outcome of ['unresolved', 'fenced', 'collision', 'accepted_with_warnings', 'confirmed_by_duplicate', 'released']) expect(help).toContain(outcome);
    for (const outcome of VAT_SUBMISSION_OUTCOMES) expect(help).toContain(outcome);
  });
});
