// Why a claim waits: a claim rewrites the member's spec (owner, displayName, idleTimeout), so its
// Ready condition speaks for an older generation until the operator reconciles it again, and the
// operator dispatches a prompt only to a workspace Ready for its current generation. This watches,
// during one claim, when claimed members become Ready for their generation again.
import {
  AgentComputerConditions,
  AgentComputerType,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
} from '../../crds/index.js';
import { isTrueForGeneration } from '../../crds/conditions.js';
import { wallMs } from '../support/child.js';
import type { Target } from './target.js';

export interface ReadinessWatch {
  /** Stops watching; answers when each claimed member was first seen Ready for its generation (wallMs). */
  stop(): Promise<Map<string, number>>;
}

/** Polls the claimed members every `pollMs` until stopped. */
export function watchClaimedReadiness(target: Target, pollMs: number): ReadinessWatch {
  const seen = new Map<string, number>();
  const stopping = new AbortController();
  const polling = (async () => {
    while (!stopping.signal.aborted) {
      const { items } = await target.store.list(AgentComputerType, {
        namespace: target.namespace,
        labelSelector: `${POOL_MEMBER_STATE_LABEL}=${PoolMemberStates.Claimed}`,
      });
      const now = wallMs();
      for (const ac of items)
        if (!seen.has(ac.metadata.name) && isTrueForGeneration(ac, AgentComputerConditions.Ready))
          seen.set(ac.metadata.name, now);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await polling;
      return seen;
    },
  };
}
