import type { AgentComputer, Organization, PromptStatusEntry, Task } from '../../crds/index.js';
import type { RunnerClient } from '../../platform/runner-client.js';
import type { ArchiveReport } from './prompt-archive.js';

/** One reconcile of one task: what it read, and the prompt entries it is converging. */
export interface TaskPass {
  task: Task;
  workspace: AgentComputer | undefined;
  /** The task was written with a warm-pool claim that went to another task (crds/workspace-pool/claim-binding.ts). */
  claimLost?: boolean;
  /** A client to the workspace's runner while it is ready for its current generation. */
  runner: RunnerClient | undefined;
  entries: PromptStatusEntry[];
  now: Date;
  /** The task's organization (from the operator's cache): its monthly budget applies. */
  organization?: Organization | undefined;
  /** The archive's outcome this pass (no object store: none). */
  archive?: ArchiveReport;
}

/** Prompts go to the runner only while it is ready and the task is not deleted. */
export const canDispatch = (pass: TaskPass): boolean =>
  pass.runner !== undefined && pass.task.spec.deletedAt === undefined;

/** A pending prompt the runner has not been sent yet. */
export const awaitsDispatch = (entry: PromptStatusEntry): boolean =>
  entry.status === 'pending' && entry.dispatchedAt === undefined;
