// The task record lives in platform/: webhook deliveries (operator) carry it too.
import type { Task } from '../../crds/index.js';
import { TaskListItemSchema, TaskRecordSchema } from '../../platform/task-record.js';
import type { TaskListItem, TaskRecord } from '../../platform/task-record.js';
import { listEnvelopeSchema } from '../pagination.js';
import type { ReadModel } from '../read-model.js';
import { workspaceOf } from './access.js';
import { AgentComputerStatusValueSchema, agentComputerStatus } from '../agent-computer/present.js';
import type { AgentComputerStatusValue } from '../agent-computer/present.js';
import type { TaskRecordCache } from './record-cache.js';
import { JsonText, fieldAppender } from '../json-text.js';

export * from '../../platform/task-record.js';

/**
 * Where the task's workspace is (`provisioning`, `ready`, `hibernated`, `error`; null once it is
 * gone): a task whose prompt is `pending` while its workspace boots says why it waits.
 */
const workspaceStatusField = { workspaceStatus: AgentComputerStatusValueSchema.nullable() };

/** The task record as the API answers it: the shared record plus the workspace's status. */
export const ApiTaskRecordSchema = TaskRecordSchema.extend(workspaceStatusField);
export const ApiTaskListItemSchema = TaskListItemSchema.extend(workspaceStatusField);
export const TaskPageSchema = listEnvelopeSchema(ApiTaskListItemSchema);

type WorkspaceStatus = AgentComputerStatusValue | null;

const workspaceStatusOf = (readModel: ReadModel, task: Task): WorkspaceStatus => {
  const ac = workspaceOf(readModel, task);
  return ac === undefined ? null : agentComputerStatus(ac);
};

/** The workspace's status changes without the task: it is added to the (cached) record on each read. */
export const presentApiTask = (
  task: Task,
  records: TaskRecordCache,
  readModel: ReadModel,
): TaskRecord & { workspaceStatus: WorkspaceStatus } => ({
  ...records.record(task),
  workspaceStatus: workspaceStatusOf(readModel, task),
});

export const presentApiTaskListItem = (
  task: Task,
  records: TaskRecordCache,
  readModel: ReadModel,
): TaskListItem & { workspaceStatus: WorkspaceStatus } => ({
  ...records.listItem(task),
  workspaceStatus: workspaceStatusOf(readModel, task),
});

const withWorkspaceStatus = fieldAppender('workspaceStatus');

/**
 * presentApiTask as the answer's JSON text, from the cached text of the record (byte for byte the
 * same), itself cached per task version and workspace status.
 */
export const apiTaskAnswer = (task: Task, records: TaskRecordCache, readModel: ReadModel): JsonText => {
  const status = workspaceStatusOf(readModel, task);
  return records.answer(task, String(status), () => {
    return new JsonText(withWorkspaceStatus(records.recordJson(task), status));
  });
};

/** presentApiTaskListItem's JSON text, likewise. */
export const apiTaskListItemJson = (task: Task, records: TaskRecordCache, readModel: ReadModel): string =>
  withWorkspaceStatus(records.listItemJson(task), workspaceStatusOf(readModel, task));
