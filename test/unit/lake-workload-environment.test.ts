import { describe, expect, it } from '@jest/globals';
import { programEnvironment, spillLimitOf } from '../../operator/runtimes/program-layout.js';
import { LAKE_PROGRAM } from '../../operator/runtimes/types.js';

describe('lake workload environment (pods and VMs)', () => {
  it('hands the lake its file roots, private-target policy and result limit when the operator has them', () => {
    const env = programEnvironment(
      LAKE_PROGRAM,
      { fileRoots: ['/srv/shared', '/srv/org'], allowPrivateTargets: true, maxResultBytes: 1_048_576 },
      { cpu: '1' },
    );
    expect(env).toMatchObject({
      AGENTRY_LAKE_FILE_ROOTS: '/srv/shared,/srv/org',
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
      AGENTRY_LAKE_MAX_RESULT_BYTES: '1048576',
    });
  });

  it('adds none of them by default, so existing lake pods keep their template', () => {
    const env = programEnvironment(LAKE_PROGRAM, { fileRoots: [], allowPrivateTargets: false }, { cpu: '1' });
    expect(env).not.toHaveProperty('AGENTRY_LAKE_FILE_ROOTS');
    expect(env).not.toHaveProperty('AGENTRY_LAKE_PRIVATE_TARGETS');
    expect(env).not.toHaveProperty('AGENTRY_LAKE_MAX_RESULT_BYTES');
  });

  it("caps DuckDB's spill at a quarter of the lake's disk, leaving room for the database file", () => {
    const env = programEnvironment(LAKE_PROGRAM, undefined, { cpu: '1', disk: '20Gi' });
    expect(env.AGENTRY_LAKE_SPILL_LIMIT).toBe('5120MiB');
    expect(spillLimitOf('1G')).toBe('238MiB');
  });

  it('sets no spill limit without a readable disk size (the process runtime)', () => {
    expect(programEnvironment(LAKE_PROGRAM, undefined, { cpu: '1' })).not.toHaveProperty(
      'AGENTRY_LAKE_SPILL_LIMIT',
    );
    expect(spillLimitOf('lots')).toBeUndefined();
  });
});
