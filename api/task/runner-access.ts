import { promptEntryOf } from '../../crds/index.js';
import type { AgentComputer, Task } from '../../crds/index.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import { RunnerClient, RunnerRequestError } from '../../platform/runner-client.js';
import type { EventsPage } from '../../platform/runner-protocol.js';
import { ApiError } from '../errors.js';
import { agentComputerStatus } from '../agent-computer/present.js';
import type { ReadModel } from '../read-model.js';
import { workspaceOf } from './access.js';
import { promptLastSeq } from './archived-events.js';

/**
 * The runner of a task's workspace, when the workspace is Ready and says where it listens; the
 * API only ever reads from it (docs/architecture.md#programs). Undefined while it provisions, sleeps or is gone.
 */
export function runnerOf(
  readModel: ReadModel,
  installationKey: InstallationKey,
  task: Task,
  timeoutMs?: number,
): RunnerClient | undefined {
  const ac = workspaceOf(readModel, task);
  if (ac === undefined) return undefined;
  const endpoint = liveEndpoint(ac);
  return endpoint === undefined
    ? undefined
    : new RunnerClient({
        endpoint,
        token: installationKey.runnerToken(ac),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
}

export function liveEndpoint(ac: AgentComputer): string | undefined {
  return agentComputerStatus(ac) === 'ready' ? ac.status?.endpoint : undefined;
}

const notRunning = (cause?: unknown): ApiError =>
  new ApiError(
    'service_unavailable',
    "The task's workspace is not running, so its events cannot be read now; send a prompt to resume it, or retry once it is ready",
    undefined,
    { cause },
  );

/**
 * Whether the Task says the prompt never started (waiting, canceled while it waited, or ended by the
 * operator while its workspace was down): no executor ran, so the runner wrote no event of it.
 */
function unstarted(task: Task, promptId: string): boolean {
  return (
    task.spec.prompts.some((prompt) => prompt.id === promptId) &&
    promptEntryOf(task, promptId)?.startedAt === undefined
  );
}

/**
 * GET /tasks/:id/prompts/:promptId/events of a prompt not (yet) archived: from the workspace's
 * runner, which keeps the log on the workspace disk; while the workspace sleeps it is out of reach
 * (503). Archived prompts are read from object storage instead (archived-events.ts).
 */
export async function promptEvents(
  readModel: ReadModel,
  installationKey: InstallationKey,
  task: Task,
  promptId: string,
): Promise<EventsPage> {
  const runner = runnerOf(readModel, installationKey, task);
  if (runner === undefined) {
    // F9: a prompt that never started has no events anywhere (yet); nothing is worth a 503.
    if (unstarted(task, promptId)) return { events: [], lastSeq: promptLastSeq(task, promptId, []) };
    throw notRunning();
  }
  try {
    const { events } = await runner.listEvents(task.metadata.name, { promptId });
    // The runner's page names the task's last seq; the prompt's own is what its clients resume from.
    return { events, lastSeq: promptLastSeq(task, promptId, events) };
  } catch (err) {
    // A runner that never received the task (the prompt is still pending) has no events for it.
    if (err instanceof RunnerRequestError && err.status === 404) return { events: [], lastSeq: -1 };
    if (err instanceof RunnerRequestError) throw notRunning(err);
    throw err;
  }
}
