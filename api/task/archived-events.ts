import { parseJson } from '../../platform/json.js';
import { createInterface } from 'node:readline';
import { promptEntryOf } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { promptEventsKey } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { TaskEventSchema } from '../../platform/runner-protocol.js';
import type { EventsPage, TaskEvent } from '../../platform/runner-protocol.js';

/** Whether the operator archived this prompt's events to object storage (they are complete there). */
export const isArchived = (task: Task, promptId: string): boolean =>
  promptEntryOf(task, promptId)?.archivedAt !== undefined;

/**
 * One archived prompt's events with a seq above `after`, in seq order (the archive is JSON lines,
 * one TaskEvent per line: see operator/task/artifacts/event-archive.ts). Read line by line; a missing
 * object means the prompt had no events to archive; a malformed line is logged and skipped.
 */
export async function readArchivedEvents(
  store: ObjectStore,
  logger: Logger,
  target: { namespace: string; task: string; promptId: string; after: number },
): Promise<TaskEvent[]> {
  const got = await store.get(promptEventsKey(target.namespace, target.task, target.promptId));
  if (got === undefined) return [];
  const events: TaskEvent[] = [];
  const lines = createInterface({ input: got.body, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const parsed = TaskEventSchema.safeParse(parseJson(line));
    if (!parsed.success) {
      logger.warn({ task: target.task, prompt: target.promptId }, 'skipping a malformed archived event');
      continue;
    }
    if (parsed.data.seq > target.after) events.push(parsed.data);
  }
  return events.sort((a, b) => a.seq - b.seq);
}

/** A prompt's last event: what the operator recorded, or a later one read meanwhile (-1 for none). */
export const promptLastSeq = (task: Task, promptId: string, events: readonly TaskEvent[]): number =>
  Math.max(promptEntryOf(task, promptId)?.lastSeq ?? -1, ...events.map((event) => event.seq));

/** GET /tasks/:id/prompts/:promptId/events of an archived prompt, from object storage. */
export async function archivedPromptEvents(
  store: ObjectStore,
  logger: Logger,
  task: Task,
  promptId: string,
): Promise<EventsPage> {
  const events = await readArchivedEvents(store, logger, {
    namespace: task.metadata.namespace ?? '',
    task: task.metadata.name,
    promptId,
    after: -1,
  });
  return { events, lastSeq: promptLastSeq(task, promptId, events) };
}
