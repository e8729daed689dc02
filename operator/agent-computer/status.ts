import {
  AgentComputerConditions,
  AgentComputerReasons,
  HIBERNATED_BY_ANNOTATION,
  workloadDigest,
} from '../../crds/index.js';
import type {
  AgentComputer,
  AgentComputerConditionType,
  AgentComputerReason,
  AgentComputerStatus,
  Runtime,
} from '../../crds/index.js';
import { ObservationReasons } from '../runtimes/types.js';
import type { WorkloadObservation } from '../runtimes/types.js';
import { setConditions } from '../../crds/conditions.js';
import type { ConditionInput } from '../../crds/conditions.js';

type AgentComputerCondition = ConditionInput<AgentComputerConditionType, AgentComputerReason>;

/** Before the runtime reported anything: nothing exists yet, as far as the operator knows. */
const UNOBSERVED: WorkloadObservation = {
  provisioned: false,
  running: false,
  ready: false,
  reason: ObservationReasons.NotObserved,
  message: 'the workload has not been observed yet',
};

function provisionedCondition(obs: WorkloadObservation): AgentComputerCondition {
  if (obs.provisionError !== undefined) {
    return {
      type: AgentComputerConditions.Provisioned,
      status: 'False',
      reason: obs.provisionErrorReason ?? AgentComputerReasons.ProvisionFailed,
      message: obs.provisionError,
    };
  }
  return {
    type: AgentComputerConditions.Provisioned,
    status: obs.provisioned ? 'True' : 'False',
    reason: obs.provisioned ? AgentComputerReasons.Provisioned : AgentComputerReasons.Provisioning,
    message: obs.message,
  };
}

function readyCondition(
  hibernating: boolean,
  obs: WorkloadObservation,
  failure: string | undefined,
): AgentComputerCondition {
  return {
    type: AgentComputerConditions.Ready,
    status: !hibernating && obs.ready ? 'True' : 'False',
    reason: readyReason(hibernating, obs, failure),
    message: failure ?? obs.message,
  };
}

function hibernatedCondition(ac: AgentComputer, obs: WorkloadObservation): AgentComputerCondition {
  const hibernating = ac.spec.operatingMode === 'Hibernated';
  if (!hibernating)
    return {
      type: AgentComputerConditions.Hibernated,
      status: 'False',
      reason: AgentComputerReasons.Running,
      message: 'not hibernated',
    };
  return {
    type: AgentComputerConditions.Hibernated,
    status: obs.running ? 'False' : 'True',
    reason: hibernationReason(ac),
    message: obs.running ? 'stopping the workload' : 'stopped; the disk is kept',
  };
}

/**
 * The status an AgentComputer should have, computed without I/O from what the runtime observed
 * (agent-sandbox's computeReadyCondition habit). `failure` is an error that kept the runtime from
 * observing at all.
 */
export function computeAgentComputerStatus(
  ac: AgentComputer,
  observation: WorkloadObservation | undefined,
  failure: string | undefined,
  now: Date,
): AgentComputerStatus {
  const generation = ac.metadata.generation;
  const obs = observation ?? { ...UNOBSERVED, message: failure ?? UNOBSERVED.message };
  const inputs = [
    provisionedCondition(obs),
    readyCondition(ac.spec.operatingMode === 'Hibernated', obs, failure),
    hibernatedCondition(ac, obs),
  ];
  const conditions = setConditions(ac.status?.conditions, inputs, generation, now);
  return {
    ...ac.status,
    observedGeneration: generation,
    // With the conditions, in one write: what readyForCurrentSpec compares a later spec with.
    observedWorkload: workloadDigest(ac.spec),
    conditions,
    sandboxId: obs.sandboxId ?? ac.status?.sandboxId,
    endpoint: obs.endpoint,
    address: obs.address,
    provisionError: obs.provisionError,
  };
}

function readyReason(
  hibernating: boolean,
  obs: WorkloadObservation,
  failure: string | undefined,
): AgentComputerReason {
  if (failure !== undefined || obs.provisionError !== undefined) return AgentComputerReasons.Failed;
  if (hibernating) return AgentComputerReasons.Hibernated;
  return obs.ready ? AgentComputerReasons.RunnerReady : AgentComputerReasons.Starting;
}

const hibernationReason = (ac: AgentComputer): AgentComputerReason =>
  ac.metadata.annotations?.[HIBERNATED_BY_ANNOTATION] === 'idle-timeout'
    ? AgentComputerReasons.IdleTimeout
    : AgentComputerReasons.Requested;

/** What an operator that does not run `runtime` tells the user: which runtime, and what to do. */
export const runtimeNotEnabledMessage = (runtime: Runtime, enabled: readonly Runtime[]): string =>
  `runtime ${runtime} is not enabled in this operator (it runs: ${enabled.join(', ') || 'none'}); ` +
  `add ${runtime} to AGENTRY_RUNTIMES of agentry operator, or set spec.runtime to one it runs`;

/**
 * The status of an AgentComputer whose runtime this operator does not run: nothing is provisioned,
 * and `provisionError` says why, so the REST status is `error` (not `provisioning` for ever).
 */
export function runtimeNotEnabledStatus(
  ac: AgentComputer,
  runtime: Runtime,
  enabled: readonly Runtime[],
  now: Date,
): AgentComputerStatus {
  const message = runtimeNotEnabledMessage(runtime, enabled);
  const reason = AgentComputerReasons.RuntimeNotEnabled;
  const inputs: AgentComputerCondition[] = [
    { type: AgentComputerConditions.Provisioned, status: 'False', reason, message },
    { type: AgentComputerConditions.Ready, status: 'False', reason, message },
  ];
  const conditions = setConditions(ac.status?.conditions, inputs, ac.metadata.generation, now);
  return {
    ...ac.status,
    observedGeneration: ac.metadata.generation,
    observedWorkload: workloadDigest(ac.spec),
    conditions,
    provisionError: message,
  };
}
