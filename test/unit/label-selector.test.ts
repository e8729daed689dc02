import { describe, expect, it } from '@jest/globals';
import {
  labelKeyProblem,
  labelValueProblem,
  matchesSelector,
  parseLabelSelector,
} from '../../platform/store/selector.js';
import type { Labels } from '../../platform/store/selector.js';
import { isStoreError } from '../../platform/store/types.js';

const matches = (selector: string, labels?: Labels): boolean =>
  matchesSelector(parseLabelSelector(selector), labels);

describe('parseLabelSelector', () => {
  it('parses each operator into a requirement, in order', () => {
    expect(parseLabelSelector('a=1,b==2,c!=3,d in (x, y),e notin (z),f,!g,h>4,i<5').requirements).toEqual([
      { key: 'a', operator: 'Equals', values: ['1'] },
      { key: 'b', operator: 'Equals', values: ['2'] },
      { key: 'c', operator: 'NotEquals', values: ['3'] },
      { key: 'd', operator: 'In', values: ['x', 'y'] },
      { key: 'e', operator: 'NotIn', values: ['z'] },
      { key: 'f', operator: 'Exists', values: [] },
      { key: 'g', operator: 'DoesNotExist', values: [] },
      { key: 'h', operator: 'GreaterThan', values: ['4'] },
      { key: 'i', operator: 'LessThan', values: ['5'] },
    ]);
  });

  it.each([
    ['an empty string', ''],
    ['only whitespace', '  \t '],
  ])('parses %s as the selector with no requirements', (_what, source) => {
    expect(parseLabelSelector(source).requirements).toEqual([]);
  });

  it.each([
    ['an unterminated set', 'a in (x'],
    ['a set without parentheses', 'a in x'],
    ['a missing key', '=b'],
    ['two values', 'a=b=c'],
    ['a trailing comma', 'a=b,'],
    ['a leading comma', ',a=b'],
    ['two words without an operator', 'a b'],
    ['! with an operator', '!a=b'],
    ['a lone !', '!'],
    ['===', 'a===b'],
    ['an operator without values', 'a notin'],
    ['a set value that is not one', 'a in (x y)'],
    ['an uppercase key prefix', 'Example.com/a=b'],
    ['a key name over 63 characters', `${'k'.repeat(64)}=v`],
    ['a value starting with a dash', 'a=-x'],
    ['a value over 63 characters', `a=${'v'.repeat(64)}`],
    ['a non-integer bound for >', 'n>abc'],
    ['a lone parenthesis', '('],
  ])('rejects %s (%j) with StoreError Invalid', (_what, source) => {
    let error: unknown;
    try {
      parseLabelSelector(source);
    } catch (err) {
      error = err;
    }
    expect(isStoreError(error, 'Invalid')).toBe(true);
    expect(error instanceof Error ? error.message : '').toContain(source);
  });
});

describe('matchesSelector', () => {
  it.each<[string, Labels | undefined, boolean]>([
    ['', undefined, true],
    ['', { a: 'x' }, true],
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a=b', {}, false],
    ['a==b', { a: 'b' }, true],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', {}, true],
    ['a!=b', { a: 'b' }, false],
    ['a in (x,y)', { a: 'y' }, true],
    ['a in (x,y)', { a: 'z' }, false],
    ['a in (x,y)', undefined, false],
    ['a notin (x)', { a: 'y' }, true],
    ['a notin (x)', {}, true],
    ['a notin (x)', { a: 'x' }, false],
    ['a', { a: '' }, true],
    ['a', { b: 'a' }, false],
    ['!a', {}, true],
    ['!a', { a: 'x' }, false],
    ['a=b,c', { a: 'b', c: '1' }, true],
    ['a=b,c', { a: 'b' }, false],
    [' a = b , c in ( x , y ) ', { a: 'b', c: 'x' }, true],
    ['a=', { a: '' }, true],
    ['a=', { a: 'x' }, false],
    ['a in (x,)', { a: '' }, true],
    ['a in ()', { a: '' }, true],
    ['in in (in,notin)', { in: 'notin' }, true],
    ['example.com/tier=gold', { 'example.com/tier': 'gold' }, true],
    ['v=1.2_3-a', { v: '1.2_3-a' }, true],
    ['n>3', { n: '5' }, true],
    ['n>3', { n: '3' }, false],
    ['n<3', { n: '-1' }, true],
    ['n>3', { n: 'many' }, false],
    ['n>3', {}, false],
  ])('%j on %j: %s', (selector, labels, expected) => {
    expect(matches(selector, labels)).toBe(expected);
  });

  it('does not treat inherited object properties as labels', () => {
    expect(matches('constructor', {})).toBe(false);
    expect(matches('!toString', {})).toBe(true);
  });
});

describe('label key and value validation', () => {
  it.each(['a', 'app.kubernetes.io/name', 'a-b_c.d', 'x/y', 'A1'])('accepts the key %j', (key) => {
    expect(labelKeyProblem(key)).toBeUndefined();
  });

  it.each(['', '-a', 'a-', 'Example.com/a', '/a', 'a/', 'a/b/c', 'has space', `${'p'.repeat(254)}/a`])(
    'rejects the key %j',
    (key) => {
      expect(labelKeyProblem(key)).toEqual(expect.stringContaining('label key'));
    },
  );

  it.each(['', 'a', 'A.b-c_d', 'v'.repeat(63)])('accepts the value %j', (value) => {
    expect(labelValueProblem(value)).toBeUndefined();
  });

  it.each(['-a', 'a.', 'a b', 'ä', 'v'.repeat(64)])('rejects the value %j', (value) => {
    expect(labelValueProblem(value)).toEqual(expect.stringContaining('label value'));
  });
});
