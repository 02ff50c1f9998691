import { describe, expect, it } from 'vitest';
import { pluck, useEmulator } from './helpers.js';

describe('tax engine routes: cursor paging', () => {
  const ctx = useEmulator();

  it('stays stable while records are added and deleted between pages', async () => {
    const put = (id: string) => ctx.http('PUT', '/v1/customers/', { json: { source: 'api', external_id: id } });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await put(id);
    const first = await ctx.http('GET', '/v1/customers/?limit=2');
    expect(pluck(first.body.data, 'external_id')).toEqual(['a', 'b']);
    expect(first.body.cursors).toMatchObject({ has_next: true, has_previous: false, limit: 2 });
    await put('f');
    await put('a'); // an update keeps its place
    const c = await ctx.http('GET', '/v1/customers/api/c');
    await ctx.http('DELETE', `/v1/customers/${c.body.id}`);
    const second = await ctx.http('GET', `/v1/customers/?limit=2&after=${first.body.cursors.after}`);
    expect(pluck(second.body.data, 'external_id')).toEqual(['d', 'e']);
    const third = await ctx.http('GET', `/v1/customers/?limit=2&after=${second.body.cursors.after}`);
    expect(pluck(third.body.data, 'external_id')).toEqual(['f']);
    expect(third.body.cursors).toMatchObject({ has_next: false, has_previous: true });
    const back = await ctx.http('GET', `/v1/customers/?limit=2&before=${third.body.cursors.before}`);
    expect(pluck(back.body.data, 'external_id')).toEqual(['d', 'e']);
    const empty = await ctx.http('GET', `/v1/customers/?after=${third.body.cursors.after}`);
    expect(empty.body).toEqual({ data: [], cursors: { after: third.body.cursors.after, before: null, has_next: false, has_previous: true, limit: 20 } });
    expect((await ctx.http('GET', '/v1/customers/?after=x&before=y')).status).toBe(400);
  });

  it('defaults to 20 and accepts up to 100', async () => {
    for (let i = 0; i < 25; i += 1) await ctx.http('PUT', '/v1/transactions/', { json: { source: 'api', external_id: `t-${i}` } });
    const page = await ctx.http('GET', '/v1/transactions/');
    expect(page.body.data).toHaveLength(20);
    expect(page.body.cursors.limit).toBe(20);
    expect((await ctx.http('GET', '/v1/transactions/?limit=100')).body.data).toHaveLength(25);
  });
});
