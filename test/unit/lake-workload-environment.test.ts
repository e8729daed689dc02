import { describe, expect, it } from '@jest/globals';
import { programEnvironment } from '../../operator/runtimes/program-layout.js';
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
});
