import { describe, expect, it } from '@jest/globals';
import type { PromptStatusEntry, Task } from '../../crds/index.js';
import { workspaceActivity } from '../../operator/agent-computer/workspace-activity.js';
import { taskFixture } from '../support/task-fixture.js';

const P1 = '00000000-0000-4000-8000-000000000001';

const task = (workspace: string, entry?: PromptStatusEntry): Task =>
  taskFixture({
    workspace,
    prompts: [{ id: P1, submittedAt: '2026-11-22T09:00:00.000Z' }],
    ...(entry === undefined ? {} : { entries: [entry] }),
  });

describe('workspace activity for idle hibernation', () => {
  it('is busy while a prompt on it waits or runs', () => {
    expect(workspaceActivity([task('w', { id: P1, status: 'running' })], 'w').busy).toBe(true);
    expect(workspaceActivity([task('w')], 'w').busy).toBe(true);
  });

  it('is idle since the latest prompt ended once every prompt is final', () => {
    const activity = workspaceActivity(
      [
        task('w', {
          id: P1,
          status: 'succeeded',
          startedAt: '2026-11-22T09:01:00.000Z',
          completedAt: '2026-11-22T09:30:00.000Z',
        }),
      ],
      'w',
    );
    expect(activity).toEqual({ busy: false, lastAt: '2026-11-22T09:30:00.000Z' });
  });

  it('ignores tasks of other workspaces', () => {
    expect(workspaceActivity([task('other', { id: P1, status: 'running' })], 'w')).toEqual({
      busy: false,
      lastAt: undefined,
    });
  });

  it('stays busy while a finished prompt is not yet archived, and idles once it is', () => {
    const finished = task('w', {
      id: P1,
      status: 'succeeded',
      startedAt: '2026-11-22T09:01:00.000Z',
      completedAt: '2026-11-22T09:30:00.000Z',
    });
    const archived = (status: 'True' | 'False'): Task => ({
      ...finished,
      status: {
        ...finished.status,
        conditions: [
          {
            type: 'Archived',
            status,
            reason: status === 'True' ? 'Archived' : 'ArchivePending',
            message: '',
            lastTransitionTime: '2026-11-22T09:30:00.000Z',
          },
        ],
      },
    });
    expect(workspaceActivity([archived('False')], 'w').busy).toBe(true);
    expect(workspaceActivity([archived('True')], 'w').busy).toBe(false);
  });
});
