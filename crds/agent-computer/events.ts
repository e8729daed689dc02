import { defineEvents } from '../event-catalog.js';

/** Kubernetes Events recorded on an AgentComputer. */
export const AgentComputerEventCatalog = defineEvents('AgentComputer', {
  RunnerReady: { type: 'Normal', doc: 'the runner in the workload answers (first start, resume, redeploy)' },
  Hibernated: { type: 'Normal', doc: 'the workload stopped on purpose; its disk is kept' },
  IdleTimeout: { type: 'Normal', doc: 'no activity for spec.idleTimeout: the operator hibernates it' },
  WorkspaceHibernated: {
    type: 'Normal',
    doc: 'a task-made (ephemeral) workspace whose task has no prompt to run is hibernated',
  },
  WorkspaceResumed: {
    type: 'Normal',
    doc: 'a prompt waits on the hibernated workspace: the operator resumes it',
  },
  ProvisionFailed: {
    type: 'Warning',
    doc: 'the workload cannot start without a change; the message is status.provisionError',
  },
});

/** Event reasons of an AgentComputer. */
export const AgentComputerEventReasons = AgentComputerEventCatalog.reasons;
