import { describe, expect, it } from 'vitest';
import { applyMergePatch, jsonEqual } from '../../../src/domain/merge-patch.js';

describe('applyMergePatch (RFC 7396)', () => {
  // The examples of RFC 7396 appendix A.
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(cases)('%j patched with %j is %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  it('modifies neither argument and shares nothing with the patch', () => {
    const target = { a: { b: 1 }, keep: [1] };
    const patch = { a: { c: [2] } };
    const out = applyMergePatch(target, patch) as { a: { b: number; c: number[] } };
    expect(target).toEqual({ a: { b: 1 }, keep: [1] });
    expect(patch).toEqual({ a: { c: [2] } });
    out.a.c.push(3);
    expect(patch.a.c).toEqual([2]);
  });

  it('replaces nested values that are not objects and leaves untouched keys alone', () => {
    expect(applyMergePatch({ data: { name: 'x', address: { city: 'A', zip: '1' } }, id: 'e' }, { data: { address: { city: 'B' } } })).toEqual({
      data: { name: 'x', address: { city: 'B', zip: '1' } },
      id: 'e',
    });
  });
});

describe('jsonEqual', () => {
  it('ignores key order and compares deeply', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual('a', 'a')).toBe(true);
  });
});
