import { defineConditions } from '../condition-catalog.js';
import type { ReasonOf } from '../condition-catalog.js';

/** The conditions of an Organization. */
export const OrganizationConditionCatalog = defineConditions('Organization', {
  Ready: {
    doc: "The organization's namespace exists, labelled, with the default network policy that closes it to other namespaces.",
    reasons: {
      NamespaceReady: 'the namespace and its default policy exist',
      NamespaceFailed: 'making them failed; the message says why, and the operator retries',
    },
  },
});

/** Condition types of an Organization. */
export const OrganizationConditions = OrganizationConditionCatalog.types;
export type OrganizationConditionType = keyof typeof OrganizationConditions;

/** Reasons of an Organization's conditions. */
export const OrganizationReasons = OrganizationConditionCatalog.reasons;
export type OrganizationReason = ReasonOf<typeof OrganizationConditionCatalog.docs>;
