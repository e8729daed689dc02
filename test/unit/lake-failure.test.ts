import { describe, expect, it } from '@jest/globals';
import { lakeFailure } from '../../api/context-lake/present.js';
import { ContextLakeReasons, ContextLakeSpecSchema } from '../../crds/index.js';
import type { ContextLake } from '../../crds/index.js';

const failedLake = (reason: string, message: string): ContextLake => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: 'context-lake', namespace: 'n', generation: 2 },
  spec: ContextLakeSpecSchema.parse({ config: { name: 'lake' }, operatingMode: 'Running' }),
  status: {
    observedGeneration: 2,
    vmStatus: 'error',
    conditions: [
      {
        type: 'Provisioned',
        status: 'False',
        observedGeneration: 2,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason,
        message,
      },
    ],
  },
});

describe('the error a lake that cannot start shows API clients', () => {
  it('is the provisioning error the operator wrote for users', () => {
    const lake = failedLake(ContextLakeReasons.ProvisionFailed, 'image agentry:x cannot be pulled');
    expect(lakeFailure(lake)).toBe('image agentry:x cannot be pulled');
  });

  // Regression: IsolationUnavailable (bubblewrap cannot run) showed "the lake server failed to start"
  // instead of what to install.
  it('is what to install when the process runtime cannot confine the lake', () => {
    const lake = failedLake(ContextLakeReasons.IsolationUnavailable, 'install bubblewrap');
    expect(lakeFailure(lake)).toBe('install bubblewrap');
  });

  it('is a general sentence for any other reason', () => {
    const lake = failedLake(ContextLakeReasons.Provisioning, 'internal detail');
    expect(lakeFailure(lake)).toBe('the lake server failed to start');
  });
});
