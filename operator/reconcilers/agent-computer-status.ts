import { AgentComputerConditions, HIBERNATED_BY_ANNOTATION } from '../../crds/index.js';
import type { AgentComputer, AgentComputerStatus, Condition } from '../../crds/index.js';
import type { WorkloadObservation } from '../runtimes/types.js';
import { setCondition } from './conditions.js';
import type { ConditionInput } from './conditions.js';

/**
 * The status an AgentComputer should have, computed without I/O from what the runtime observed
 * (agent-sandbox's computeReadyCondition habit). `failure` is an error that kept the runtime from
 * observing at all.
 */
const UNOBSERVED: WorkloadObservation = {
  provisioned: false,
  running: false,
  ready: false,
  reason: 'NotObserved',
  message: 'the workload has not been observed yet',
};

function provisionedCondition(obs: WorkloadObservation): ConditionInput {
  if (obs.provisionError !== undefined) {
    return {
      type: AgentComputerConditions.Provisioned,
      status: 'False',
      reason: obs.provisionErrorReason ?? 'ProvisionFailed',
      message: obs.provisionError,
    };
  }
  return {
    type: AgentComputerConditions.Provisioned,
    status: obs.provisioned ? 'True' : 'False',
    reason: obs.provisioned ? 'Provisioned' : 'Provisioning',
    message: obs.message,
  };
}

function readyCondition(
  hibernating: boolean,
  obs: WorkloadObservation,
  failure: string | undefined,
): ConditionInput {
  return {
    type: AgentComputerConditions.Ready,
    status: !hibernating && obs.ready ? 'True' : 'False',
    reason: readyReason(hibernating, obs, failure),
    message: failure ?? obs.message,
  };
}

function hibernatedCondition(ac: AgentComputer, obs: WorkloadObservation): ConditionInput {
  const hibernating = ac.spec.operatingMode === 'Hibernated';
  if (!hibernating)
    return {
      type: AgentComputerConditions.Hibernated,
      status: 'False',
      reason: 'Running',
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
  const conditions = inputs.reduce(
    (list: Condition[] | undefined, input) => setCondition(list, input, generation, now),
    ac.status?.conditions,
  );
  return {
    ...ac.status,
    observedGeneration: generation,
    conditions,
    sandboxId: obs.sandboxId ?? ac.status?.sandboxId,
    endpoint: obs.endpoint,
    provisionError: obs.provisionError,
  };
}

function readyReason(hibernating: boolean, obs: WorkloadObservation, failure: string | undefined): string {
  if (failure !== undefined || obs.provisionError !== undefined) return 'Failed';
  if (hibernating) return 'Hibernated';
  return obs.ready ? 'RunnerReady' : 'Starting';
}

const hibernationReason = (ac: AgentComputer): string =>
  ac.metadata.annotations?.[HIBERNATED_BY_ANNOTATION] === 'idle-timeout' ? 'IdleTimeout' : 'Requested';
