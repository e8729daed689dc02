import { defineEvents } from '../event-catalog.js';

/** Kubernetes Events recorded on a ContextLake. */
export const ContextLakeEventCatalog = defineEvents('ContextLake', {
  LakeStarted: { type: 'Normal', doc: 'the lake server runs (vmStatus running)' },
  LakeHibernated: { type: 'Normal', doc: 'the lake server stopped (vmStatus paused); its disk is kept' },
  IdleTimeout: { type: 'Normal', doc: 'no query for spec.idleTimeout: the operator hibernates it' },
  ProvisionFailed: { type: 'Warning', doc: 'the lake cannot start (vmStatus error); the message says why' },
  ConfigApplied: { type: 'Normal', doc: 'the lake server serves a new generation of the configuration' },
  ConfigInvalid: { type: 'Warning', doc: 'the configuration cannot be applied; the message says why' },
  DatasetFailed: { type: 'Warning', doc: 'a dataset could not be loaded; the message names it and why' },
});

/** Event reasons of a ContextLake. */
export const ContextLakeEventReasons = ContextLakeEventCatalog.reasons;
