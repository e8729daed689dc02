import type { PromptSpec, PromptStatusEntry, Task, TaskStatusValue } from '../../crds/index.js';

/**
 * A Task as the API writes it (spec) and, when given, as the operator recorded it (status), for
 * tests of pure functions. Prompts default to one; `cancel` marks a requested cancel.
 */
export function taskFixture(
  options: {
    prompts?: { id: string; cancel?: boolean; submittedAt?: string }[];
    entries?: PromptStatusEntry[];
    status?: TaskStatusValue;
    workspace?: string;
    generation?: number;
  } = {},
): Task {
  const at = '2026-11-22T10:00:00.000Z';
  const prompts: PromptSpec[] = (options.prompts ?? [{ id: '00000000-0000-4000-8000-000000000001' }]).map(
    (prompt) => ({
      id: prompt.id,
      text: 'x',
      submittedAt: prompt.submittedAt ?? at,
      ...(prompt.cancel === true ? { cancelRequestedAt: at } : {}),
    }),
  );
  const recorded = options.entries !== undefined || options.status !== undefined;
  return {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: {
      name: `t-${options.workspace ?? 'w'}`,
      namespace: 'n',
      ...(options.generation === undefined ? {} : { generation: options.generation }),
    },
    spec: {
      workspace: options.workspace ?? 'w',
      executor: 'shell',
      title: 't',
      owner: 'u',
      visibility: 'shared',
      prompts,
    },
    ...(recorded
      ? {
          status: {
            ...(options.status === undefined ? {} : { status: options.status }),
            prompts: options.entries ?? [],
          },
        }
      : {}),
  };
}
