import { defineConditions } from '../condition-catalog.js';
import type { ReasonOf } from '../condition-catalog.js';

/** The conditions of an AgentComputer, each stamped with the generation it was observed for. */
export const AgentComputerConditionCatalog = defineConditions('AgentComputer', {
  Provisioned: {
    doc: 'The VM, pod or process exists (hibernated: everything that must persist does).',
    reasons: {
      Provisioning: 'it is being made, or has not been observed yet',
      Provisioned: 'it exists',
      ProvisionFailed:
        'it cannot start without a change (an image that cannot be pulled, a pod that cannot be scheduled); status.provisionError says why',
      IsolationUnavailable:
        'the process runtime cannot confine it (bubblewrap cannot run here); the message says what to install',
      RuntimeNotEnabled:
        'spec.runtime names a runtime this operator does not run (AGENTRY_RUNTIMES); the message says what to enable',
    },
  },
  Ready: {
    doc: 'The runner in the workspace answers its health check: prompts can be dispatched.',
    reasons: {
      Starting: 'the workload is starting',
      RunnerReady: 'the runner answers',
      Hibernated: 'the workspace is hibernated (spec.operatingMode Hibernated)',
      Failed: 'the workload cannot be converged or cannot start; the message says why',
      RuntimeNotEnabled: 'spec.runtime names a runtime this operator does not run',
    },
  },
  Hibernated: {
    doc: 'The workload is stopped on purpose; its disk is kept.',
    reasons: {
      Running: 'not asked to hibernate',
      IdleTimeout: 'hibernated by the operator after spec.idleTimeout without a prompt',
      Requested: 'hibernated because a user asked (POST /stop, spec.operatingMode)',
    },
  },
});

/** Condition types of an AgentComputer. */
export const AgentComputerConditions = AgentComputerConditionCatalog.types;
export type AgentComputerConditionType = keyof typeof AgentComputerConditions;

/** Reasons of an AgentComputer's conditions. */
export const AgentComputerReasons = AgentComputerConditionCatalog.reasons;
export type AgentComputerReason = ReasonOf<typeof AgentComputerConditionCatalog.docs>;
