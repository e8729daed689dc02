import { describe, expect, it } from '@jest/globals';
import { planArtifactSync, planPath, unquoteEtag } from '../../operator/task/artifacts/sync-plan.js';
import type { RunnerSide, StoreSide, SyncAction } from '../../operator/task/artifacts/sync-plan.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

const r = (md5: string): RunnerSide => ({ md5, size: 1 });
const s = (etag: string): StoreSide => ({ etag, size: 1 });
const base = (md5: string, etag = md5) => ({ md5, etag });

// Numbered cases: runner side, base, store side → the one action for the path (undefined: nothing).
const CASES: [
  string,
  RunnerSide | undefined,
  ReturnType<typeof base> | undefined,
  StoreSide | undefined,
  SyncAction | undefined,
][] = [
  ['1 nothing changed', r(A), base(A), s(A), undefined],
  [
    '2 the agent wrote a new file',
    r(A),
    undefined,
    undefined,
    { kind: 'upload', path: 'p', md5: A, size: 1 },
  ],
  ['3 the agent changed a file', r(B), base(A), s(A), { kind: 'upload', path: 'p', md5: B, size: 1 }],
  ['4 the agent deleted a file', undefined, base(A), s(A), { kind: 'deleteFromStore', path: 'p' }],
  [
    '5 the API uploaded a new file',
    undefined,
    undefined,
    s(A),
    { kind: 'download', path: 'p', etag: A, size: 1 },
  ],
  ['6 the API replaced a file', r(A), base(A), s(B), { kind: 'download', path: 'p', etag: B, size: 1 }],
  ['7 the API deleted a file', r(A), base(A), undefined, { kind: 'deleteFromRunner', path: 'p' }],
  [
    '8 both changed it: the workspace wins',
    r(B),
    base(A),
    s(C),
    { kind: 'upload', path: 'p', md5: B, size: 1 },
  ],
  [
    '9 the agent deleted what the API replaced: the workspace wins',
    undefined,
    base(A),
    s(B),
    { kind: 'deleteFromStore', path: 'p' },
  ],
  [
    '10 the API deleted what the agent changed: the workspace wins',
    r(B),
    base(A),
    undefined,
    { kind: 'upload', path: 'p', md5: B, size: 1 },
  ],
  ['11 both deleted it', undefined, base(A), undefined, { kind: 'forget', path: 'p' }],
  ['12 both hold the same new bytes', r(B), base(A), s(B), { kind: 'agree', path: 'p', entry: base(B) }],
  [
    '13 same bytes on both sides, no base yet',
    r(A),
    undefined,
    s(A),
    { kind: 'agree', path: 'p', entry: base(A) },
  ],
  ['14 a multipart ETag unchanged since the base', r(A), base(A, 'x-2'), s('x-2'), undefined],
  [
    '15 a multipart ETag that changed',
    r(A),
    base(A, 'x-2'),
    s('y-2'),
    { kind: 'download', path: 'p', etag: 'y-2', size: 1 },
  ],
];

describe('artifact sync plan (three-way against the base)', () => {
  it.each(CASES)('case %s', (_name, runner, baseEntry, store, expected) => {
    expect(planPath('p', runner, baseEntry, store)).toEqual(expected);
  });

  it('plans every path either side or the base knows, in path order, and carries unchanged base entries over', () => {
    const plan = planArtifactSync(
      new Map([
        ['same.txt', r(A)],
        ['reports/new.txt', r(B)],
      ]),
      { 'same.txt': base(A), 'deleted.txt': base(C) },
      new Map([
        ['same.txt', s(A)],
        ['deleted.txt', s(C)],
        ['uploaded.txt', s(B)],
      ]),
    );
    expect(plan.actions.map((action) => [action.kind, action.path])).toEqual([
      ['deleteFromStore', 'deleted.txt'],
      ['upload', 'reports/new.txt'],
      ['download', 'uploaded.txt'],
    ]);
    expect(plan.unchanged).toEqual({ 'same.txt': base(A) });
  });

  it('is idempotent: after the base records a completed sync, the same sides plan nothing', () => {
    const runner = new Map([['x', r(A)]]);
    const store = new Map([['x', s(A)]]);
    expect(planArtifactSync(runner, { x: base(A) }, store).actions).toEqual([]);
  });

  it('reads a file named __proto__ as a path, not as the base object prototype', () => {
    const plan = planArtifactSync(new Map([['__proto__', r(A)]]), {}, new Map());
    expect(plan.actions).toEqual([{ kind: 'upload', path: '__proto__', md5: A, size: 1 }]);
  });

  it('takes the quotes off S3 ETags', () => {
    expect(unquoteEtag(`"${A}"`)).toBe(A);
    expect(unquoteEtag('"abc-3"')).toBe('abc-3');
    expect(unquoteEtag(A)).toBe(A);
  });
});
