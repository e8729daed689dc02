import { promptEventsKey } from '../../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../../platform/objectstore/types.js';
import { RunnerRequestError } from '../../../platform/runner-client.js';
import type { RunnerClient } from '../../../platform/runner-client.js';
import { isTerminalPromptStatus } from '../../../platform/runner-protocol.js';
import type { EventsPage } from '../../../platform/runner-protocol.js';

export type ArchiveOutcome = 'archived' | 'notFinished';

/**
 * Copies one prompt's events from the runner's log to object storage (`promptEventsKey`: JSON lines,
 * one TaskEvent per line, in seq order), so they stay readable while the workspace sleeps or after
 * it is gone. Only a terminal prompt is archived: its last event (`status`) is written before the
 * runner reports it terminal, so the copy is complete. Idempotent: archiving again writes the same
 * bytes.
 */
export async function archivePromptEvents(
  runner: RunnerClient,
  store: ObjectStore,
  target: { namespace: string; task: string; promptId: string },
): Promise<ArchiveOutcome> {
  const state = await runner.getPrompt(target.task, target.promptId);
  if (state !== undefined && !isTerminalPromptStatus(state.status)) return 'notFinished';
  let page: EventsPage;
  try {
    page = await runner.listEvents(target.task, { promptId: target.promptId });
  } catch (err) {
    // A runner that never heard of the task has no events of it (its disk may have been replaced).
    if (!(err instanceof RunnerRequestError && err.status === 404)) throw err;
    page = { events: [], lastSeq: -1 };
  }
  const lines = page.events.map((event) => `${JSON.stringify(event)}\n`).join('');
  await store.put(
    promptEventsKey(target.namespace, target.task, target.promptId),
    Buffer.from(lines, 'utf8'),
    {
      contentType: 'application/jsonl',
    },
  );
  return 'archived';
}
