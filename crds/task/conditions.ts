import { defineConditions } from '../condition-catalog.js';
import type { ReasonOf } from '../condition-catalog.js';

/** The conditions of a Task, each stamped with the generation it was observed for. */
export const TaskConditionCatalog = defineConditions('Task', {
  WorkspaceReady: {
    doc: "The task's AgentComputer is Ready for its current generation.",
    reasons: {
      WorkspaceReady: 'the workspace is ready',
      WorkspaceStarting: 'waiting for the workspace to be ready (a waiting prompt resumes a hibernated one)',
      WorkspaceMissing: "the workspace does not exist; the task's prompts fail",
      WorkspaceClaimLost:
        "the warm-pool claim the task was written with went to another request or never came, for 30 s: the task's prompts fail (the API server deletes such a task itself unless it stopped between its two writes)",
    },
  },
  Dispatched: {
    doc: 'Every prompt that waits to run has reached the runner (one that cannot run ends failed, with its error on the prompt).',
    reasons: {
      Dispatched: 'every prompt reached the runner',
      Waiting: 'prompts wait for the workspace; the message says how many',
    },
  },
  Archived: {
    doc: "Every finished prompt's events and the artifacts it left are in object storage; absent when the installation has none. While False the workspace does not count as idle.",
    reasons: {
      Archived: 'everything is archived',
      ArchivePending: 'archiving is owed and waits for the workspace',
      ArchiveFailed: 'the last try failed; retried with back-off',
    },
  },
});

/** Condition types of a Task. */
export const TaskConditions = TaskConditionCatalog.types;
export type TaskConditionType = keyof typeof TaskConditions;

/** Reasons of a Task's conditions. */
export const TaskReasons = TaskConditionCatalog.reasons;
export type TaskReason = ReasonOf<typeof TaskConditionCatalog.docs>;
