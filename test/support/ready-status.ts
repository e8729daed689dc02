import type { AgentComputer, AgentComputerStatus } from '../../crds/index.js';
import { computeAgentComputerStatus } from '../../operator/agent-computer/status.js';
import { ObservationReasons } from '../../operator/runtimes/types.js';

/**
 * The status the AgentComputer reconciler writes once the workspace's runner answers (at `endpoint`,
 * if given): its own status function, so tests that stand in for the operator write what it would.
 */
export const readyStatus = (ac: AgentComputer, endpoint?: string): AgentComputerStatus =>
  computeAgentComputerStatus(
    ac,
    {
      provisioned: true,
      running: true,
      ready: true,
      reason: ObservationReasons.RunnerReady,
      message: 'the runner answers',
      ...(endpoint === undefined ? {} : { endpoint }),
    },
    undefined,
    new Date(),
  );
