import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/domain/errors.js';
import type { RequestLogEntry } from '../../../src/emulator/index.js';
import { ENTITY, rejectionOf, useEmulatorClients, vatBody } from '../../helpers/emulator-clients.js';

// Faults of the emulator as taxsync's client sees them: each injected failure gets its error class.

describe('faults over HTTP', () => {
  const ctx = useEmulatorClients();

  it('a seeded error rate gives the same statuses for the same seed (set through the control API)', async () => {
    const run = async () => {
      const set = await ctx.http('PUT', '/__emulator/faults', { json: { seed: 7, rules: [{ kind: 'error', route: 'customers.list', rate: 0.5, status: 503 }] }, token: null });
      expect(set.status).toBe(200);
      const statuses = [];
      for (let i = 0; i < 20; i += 1) statuses.push((await ctx.http('GET', '/v1/customers/')).status);
      return statuses;
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set([200, 503]));
    expect(await run()).toEqual(first);
    const faults = await ctx.http('GET', '/__emulator/faults', { token: null });
    expect(faults.body.rules[0].fired).toBe(first.filter((s) => s === 503).length);
    expect(ctx.emulator.requestLog.entries().find((e) => e.status === 503)?.faults).toEqual(['error']);
  });

  it('429 carries Retry-After, which the client reports as API_RATE_LIMITED with the wait', async () => {
    ctx.emulator.faults.add({ kind: 'rate_limit', route: 'customers.upsert', retry_after_s: 2, times: 1 });
    const error = await rejectionOf(ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-1' }));
    expect(hasCode(error, 'API_RATE_LIMITED')).toBe(true);
    expect(error.retryAfterMs).toBe(2000);
    expect(ctx.emulator.state.customers.live()).toHaveLength(0);
    expect((await ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-1' })).external_id).toBe('c-1');
  });

  it('an injected 500 is API_SERVER_ERROR and changes nothing', async () => {
    ctx.emulator.faults.add({ kind: 'error', route: 'transactions.upsert', times: 1 });
    const error = await rejectionOf(ctx.clients.tax.transactions.upsert({ source: 'api', external_id: 't-1' }));
    expect(hasCode(error, 'API_SERVER_ERROR')).toBe(true);
    expect(ctx.emulator.state.transactions.live()).toHaveLength(0);
  });

  it('an injected 403, 404 or undocumented status is API_FORBIDDEN, API_NOT_FOUND, API_UNEXPECTED_STATUS', async () => {
    for (const [status, code] of [
      [403, 'API_FORBIDDEN'],
      [404, 'API_NOT_FOUND'],
      [418, 'API_UNEXPECTED_STATUS'],
    ] as const) {
      ctx.emulator.faults.set([{ kind: 'error', route: 'customers.upsert', status }]);
      const error = await rejectionOf(ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-1' }));
      expect(hasCode(error, code)).toBe(true);
      expect(error.message).toContain(`injected ${status} (emulator fault)`);
    }
    expect(ctx.emulator.state.customers.live()).toHaveLength(0);
  });

  it('a dropped connection after processing: the submission is stored, the client gets no answer, the retry is a duplicate', async () => {
    const reg = await ctx.clients.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY });
    ctx.emulator.faults.add({ kind: 'drop', route: 'vat.submit', times: 1 });
    const body = vatBody(reg.entity_jurisdiction!) as never;
    const error = await rejectionOf(ctx.clients.vat.submitTransaction(body));
    expect(hasCode(error, 'API_NETWORK')).toBe(true);
    expect(error.ambiguous).toBe(true);
    expect(ctx.emulator.state.vatTransactions.live()).toHaveLength(1);
    const dropped = ctx.emulator.requestLog.entries().find((e) => e.endpoint === 'vat.submit');
    expect(dropped).toMatchObject({ outcome: 'dropped', status: 201, faults: ['drop'], record: { kind: 'vat' } });
    expect(hasCode(await rejectionOf(ctx.clients.vat.submitTransaction(body)), 'VAT_DUPLICATE')).toBe(true);
  });

  it('forced token expiry: the old token gets 401, the client renews once and carries on', async () => {
    const token = await ctx.token();
    await ctx.clients.tax.verify();
    const expired = await ctx.http('POST', '/__emulator/tokens/expire', { token: null });
    expect(expired.body).toEqual({ expired: 2 });
    const raw = await ctx.http('POST', '/v1/auth/verify', { token });
    expect(raw.status).toBe(401);
    expect(raw.body.error).toMatch(/forced expiry/);
    ctx.emulator.requestLog.clear();
    await ctx.clients.tax.customers.list();
    expect(ctx.emulator.requestLog.entries().map((e) => [e.endpoint, e.status])).toEqual([
      ['customers.list', 401],
      ['auth.token', 200],
      ['customers.list', 200],
    ]);
  });

  it('the expire_token fault expires the presented token on chosen routes', async () => {
    await ctx.clients.tax.verify();
    ctx.emulator.faults.add({ kind: 'expire_token', route: 'customers.list', times: 1 });
    ctx.emulator.requestLog.clear();
    await ctx.clients.tax.customers.list();
    expect(ctx.emulator.requestLog.entries().map((e) => e.status)).toEqual([401, 200, 200]);
    expect(ctx.emulator.requestLog.entries()[0]!.faults).toEqual(['expire_token']);
  });

  it('the request log shows overlapping requests for one record with start and end times', async () => {
    ctx.emulator.faults.add({ kind: 'latency', route: 'customers.upsert', ms: 150 });
    await Promise.all([
      ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-9', name: 'first' }),
      ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-9', name: 'second' }),
    ]);
    const res = await ctx.http('GET', `/__emulator/requests?record_key=${encodeURIComponent('customer:api:c-9')}`, { token: null });
    const [a, b] = res.body.requests as RequestLogEntry[];
    expect(res.body.requests).toHaveLength(2);
    for (const entry of [a, b]) {
      expect(entry).toMatchObject({ method: 'PUT', path: '/v1/customers/', endpoint: 'customers.upsert', outcome: 'answered', faults: ['latency'] });
      expect(entry!.end_ms! - entry!.start_ms).toBeGreaterThanOrEqual(140);
      expect(Date.parse(entry!.ended_at!)).toBeGreaterThanOrEqual(Date.parse(entry!.started_at));
    }
    expect(a!.start_ms < b!.end_ms! && b!.start_ms < a!.end_ms!).toBe(true);
    expect([a!.status, b!.status].sort()).toEqual([200, 201]);
  });

  it('latency after processing: the change is visible while the answer is still on its way', async () => {
    ctx.emulator.faults.add({ kind: 'latency', route: 'customers.upsert', ms: 300, phase: 'after' });
    const pending = ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-late' });
    const deadline = Date.now() + 5000;
    while (ctx.emulator.state.customers.live().length === 0 && Date.now() < deadline) await sleep(10);
    expect(ctx.emulator.state.customers.live()).toHaveLength(1);
    expect(ctx.emulator.requestLog.entries().find((e) => e.endpoint === 'customers.upsert')?.outcome).toBe('in_flight');
    await pending;
  });

  it('reset clears records, tokens, the log and the faults', async () => {
    await ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-1' });
    ctx.emulator.faults.add({ kind: 'latency', ms: 1 });
    expect((await ctx.http('POST', '/__emulator/reset', { token: null })).status).toBe(204);
    const info = await ctx.http('GET', '/__emulator/', { token: null });
    expect(info.body.counts.customers).toBe(0);
    expect(info.body.faults.rules).toEqual([]);
    expect(ctx.emulator.requestLog.entries()).toEqual([]);
    // The client's cached token was forgotten by the emulator: it renews and carries on.
    expect((await ctx.clients.tax.customers.list()).data).toEqual([]);
  });

  it('invalid fault rules are refused with field errors', async () => {
    const res = await ctx.http('POST', '/__emulator/faults', { json: { kind: 'explode' }, token: null });
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveProperty('kind');
  });
});

