import {
  DatasetSchema,
  DatasetStatusSchema,
  SpicepodSchema,
  ViewSchema,
  VmStatusSchema,
} from '../../crds/context-lake/types.js';
import { SqlResultSchema } from '../../platform/lake-protocol.js';
import { PromptListRecordSchema, PromptRecordSchema } from '../../platform/task-record.js';
import { ArtifactPageSchema, ArtifactRecordSchema } from '../agent-computer/artifacts/record.js';
import {
  AgentComputerPageSchema,
  AgentComputerRecordSchema,
  AgentComputerStatusValueSchema,
} from '../agent-computer/present.js';
import {
  ConfigResponseSchema,
  DatasetBodySchema,
  DatasetUpdateSchema,
  LakeStatusResponseSchema,
  NotificationSetupSchema,
  ViewBodySchema,
} from '../context-lake/schemas.js';
import { ErrorBodySchema, LakeErrorBodySchema } from '../errors.js';
import { OrganizationRecordSchema } from '../organization/routes.js';
import { TaskContentSchema } from '../task/content.js';
import {
  ApiTaskListItemSchema,
  ApiTaskRecordSchema,
  TaskPageSchema,
  TaskRecordSchema,
} from '../task/present.js';
import {
  CreatedTaskSchema,
  PromptEventsSchema,
  TaskEventRecordSchema,
  TaskStreamDoneSchema,
  TaskStreamFrameSchema,
} from '../task/schemas.js';
import { PublicKeyDocumentSchema, WebhookPageSchema, WebhookRecordSchema } from '../webhook/present.js';
import { SchemaNames } from './components.js';

/**
 * The named types of the OpenAPI document (`components.schemas`): what a client generator turns
 * into its types. Response shapes are named as the server answers them; request shapes as it
 * accepts them (a request body without a name here is named for its operation).
 */
export const responseNames = new SchemaNames()
  .name(AgentComputerRecordSchema, 'AgentComputer', 'An agent computer (a workspace, a sandbox)')
  .name(AgentComputerPageSchema, 'AgentComputerPage', 'A page of agent computers')
  .name(AgentComputerStatusValueSchema, 'AgentComputerStatus', "Where an agent computer's lifecycle is")
  .name(ApiTaskRecordSchema, 'Task', 'A task with its prompts, as its owner reads it')
  .name(ApiTaskListItemSchema, 'TaskListItem', 'A task in a list (its prompts without their text)')
  .name(TaskPageSchema, 'TaskPage', 'A page of tasks')
  .name(CreatedTaskSchema, 'CreatedTask', 'A task just created (its workspace may still be starting)')
  .name(TaskRecordSchema, 'SharedTask', 'A public task, as its share link shows it')
  .name(PromptRecordSchema, 'Prompt', 'One prompt of a task and how it went')
  .name(PromptListRecordSchema, 'PromptListItem', 'One prompt of a task in a list (without its text)')
  .name(TaskContentSchema, 'TaskContent', 'The conversation of a task, oldest prompt first')
  .name(TaskEventRecordSchema, 'TaskEvent', 'One execution event of a prompt, as the runner logged it')
  .name(PromptEventsSchema, 'PromptEvents', "One prompt's events so far")
  .name(TaskStreamFrameSchema, 'TaskStreamFrame', 'One server-sent frame of a task event stream')
  .name(TaskStreamDoneSchema, 'TaskStreamDone', "The closing `done` frame's data")
  .name(ArtifactRecordSchema, 'Artifact', 'A file a workspace produced')
  .name(ArtifactPageSchema, 'ArtifactPage', 'A page of artifacts')
  .name(WebhookRecordSchema, 'Webhook', 'A webhook registration (its secret never shown)')
  .name(WebhookPageSchema, 'WebhookPage', 'A page of webhooks')
  .name(PublicKeyDocumentSchema, 'WebhookPublicKeys', 'The keys that sign webhook deliveries')
  .name(OrganizationRecordSchema, 'Organization', 'An organization of the installation')
  .name(DatasetSchema, 'Dataset', 'A dataset of the context lake')
  .name(ViewSchema, 'View', 'A SQL view of the context lake')
  .name(SpicepodSchema, 'LakeConfig', "The context lake's configuration (datasets and views)")
  .name(ConfigResponseSchema, 'LakeConfigDocument', 'The configuration, as YAML and as JSON')
  .name(LakeStatusResponseSchema, 'LakeStatus', "The context lake's machine and datasets now")
  .name(VmStatusSchema, 'LakeVmStatus', "Where the context lake's machine is")
  .name(DatasetStatusSchema, 'DatasetStatus', "A dataset's state in the running lake")
  .name(NotificationSetupSchema, 'NotificationSetup', 'What a bucket owner sets up for notifications')
  .name(SqlResultSchema, 'SqlResult', 'The answer to a SQL query')
  .name(ErrorBodySchema, 'Error', 'An error (every API but the context lake)')
  .name(LakeErrorBodySchema, 'LakeError', "An error of the context lake's API");

export const requestNames = new SchemaNames()
  .name(DatasetBodySchema, 'DatasetInput', 'A dataset to add or replace')
  .name(DatasetUpdateSchema, 'DatasetUpdate', "Fields replacing a dataset's own")
  .name(ViewBodySchema, 'ViewInput', 'A view to add or replace');
