import { defineEvents } from '../event-catalog.js';

/** Kubernetes Events recorded on a WorkspacePool. */
export const WorkspacePoolEventCatalog = defineEvents('WorkspacePool', {
  RefillFailed: {
    type: 'Warning',
    doc: 'members cannot be made or cannot start; the message names the member (or the store) and why',
  },
});

/** Event reasons of a WorkspacePool. */
export const WorkspacePoolEventReasons = WorkspacePoolEventCatalog.reasons;
