import { defineEvents } from '../event-catalog.js';

/** Kubernetes Events recorded on a Task. */
export const TaskEventCatalog = defineEvents('Task', {
  PromptStarted: {
    type: 'Normal',
    doc: 'a prompt started running on the workspace (the message names the executor)',
  },
  PromptSucceeded: { type: 'Normal', doc: 'a prompt ended with a result' },
  PromptFailed: { type: 'Warning', doc: 'a prompt ended with an error; the message says which' },
  PromptCanceled: { type: 'Normal', doc: 'a prompt was canceled' },
  BudgetExceeded: {
    type: 'Warning',
    doc: "a prompt was stopped because the task's or the organization's model budget was reached",
  },
  EgressDenied: {
    type: 'Warning',
    doc: 'the egress proxy refused a connection of the task (the message names host, port and reason)',
  },
  ArchiveFailed: {
    type: 'Warning',
    doc: "a finished prompt's events or artifacts could not be copied to object storage; the operator retries",
  },
});

/** Event reasons of a Task. */
export const TaskEventReasons = TaskEventCatalog.reasons;
