import { defineConditions } from '../condition-catalog.js';
import type { ReasonOf } from '../condition-catalog.js';

/** The conditions of a WorkspacePool, each stamped with the generation it was observed for. */
export const WorkspacePoolConditionCatalog = defineConditions('WorkspacePool', {
  Ready: {
    doc: "status.ready has reached status.desired (spec.minReady, plus the last minute's claims up to spec.maxReady): a claim gets a member at once.",
    reasons: {
      Filled: 'status.ready has reached the desired count',
      Refilling: 'members are being made or are starting; status.provisioning says how many',
      RefillFailed:
        'members cannot be made or cannot start (an image that cannot be pulled, a runtime this operator does not run); the message says why',
      InvalidSpec: 'spec.maxReady is below spec.minReady; nothing is made until it is fixed',
    },
  },
});

/** Condition types of a WorkspacePool. */
export const WorkspacePoolConditions = WorkspacePoolConditionCatalog.types;
export type WorkspacePoolConditionType = keyof typeof WorkspacePoolConditions;

/** Reasons of a WorkspacePool's conditions. */
export const WorkspacePoolReasons = WorkspacePoolConditionCatalog.reasons;
export type WorkspacePoolReason = ReasonOf<typeof WorkspacePoolConditionCatalog.docs>;
