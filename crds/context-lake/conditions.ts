import { defineConditions } from '../condition-catalog.js';
import type { ReasonOf } from '../condition-catalog.js';

/** The conditions of a ContextLake, each stamped with the generation it was observed for. */
export const ContextLakeConditionCatalog = defineConditions('ContextLake', {
  Provisioned: {
    doc: "The lake server's VM, pod or process exists.",
    reasons: {
      NotProvisioned: 'the lake has never been started, so nothing was made for it',
      Provisioning: 'it is being made, or has not been observed yet',
      Provisioned: 'it exists',
      ProvisionFailed: 'it cannot start without a change; the message says why',
      IsolationUnavailable:
        'the process runtime cannot confine it (bubblewrap cannot run here); the message says what to install',
    },
  },
  Ready: {
    doc: "The lake server answers and serves this generation's configuration (every dataset past its first load; failures show per dataset).",
    reasons: {
      Starting: 'the lake server is starting',
      Loading: 'a new generation is loading; the old data is still served',
      Loaded: 'the configuration is applied; the message counts ready and failed datasets',
      Paused: 'the lake is hibernated, or has never been started; a query or POST /start resumes it',
      ConfigInvalid:
        'the configuration cannot be applied (a missing credential, say); the message names keys, never values',
      Failed: 'the workload cannot be converged or cannot start; the message says why',
    },
  },
  NotificationsReady: {
    doc: "The organization's SQS queue for S3 event notifications exists (only while a dataset asks for notifications).",
    reasons: {
      QueueReady: 'bucket events arrive through the queue named in status.notifications',
      QueueFailed: 'making the queue failed; the message says why',
    },
  },
});

/** Condition types of a ContextLake. */
export const ContextLakeConditions = ContextLakeConditionCatalog.types;
export type ContextLakeConditionType = keyof typeof ContextLakeConditions;

/** Reasons of a ContextLake's conditions. */
export const ContextLakeReasons = ContextLakeConditionCatalog.reasons;
export type ContextLakeReason = ReasonOf<typeof ContextLakeConditionCatalog.docs>;
