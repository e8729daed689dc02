import { z } from 'zod';
import {
  OrganizationLimitsSchema,
  OrganizationSpecSchema,
  OrganizationType,
  apiVersionOf,
  dnsLabel,
} from '../crds/index.js';
import type { Organization } from '../crds/index.js';
import { retryOnConflict } from './store/retry-on-conflict.js';
import { isStoreError } from './store/types.js';
import type { ResourceStore } from './store/types.js';

/**
 * Installation administration of organizations (the tenants), shared by `agentry orgs` and any
 * admin API: create, list, read, change limits and plan, delete. Each change is a read-modify-write
 * of the Organization resource, retried on a conflict with the operator's status writes.
 */

export const OrganizationPlanSchema = OrganizationSpecSchema.shape.plan.unwrap();
/** Only the limits given (not `.partial()`: the limits' defaults would fill in the others). */
const limit = z.number().int().min(0).max(10000).optional();
export const OrganizationLimitsPatchSchema = z.strictObject({
  webhooks: limit,
  concurrentTasks: limit,
  agentComputers: limit,
});
export type OrganizationLimitsPatch = z.infer<typeof OrganizationLimitsPatchSchema>;

export const NewOrganizationSchema = z.object({
  name: dnsLabel,
  displayName: z.string().min(1).max(200).optional(),
  plan: OrganizationPlanSchema.optional(),
  limits: OrganizationLimitsPatchSchema.optional(),
});
export type NewOrganization = z.infer<typeof NewOrganizationSchema>;

/** The change could not be made as asked (it names what, for a CLI line or a 4xx message). */
export class OrganizationAdminError extends Error {
  constructor(
    readonly code: 'not_found' | 'conflict',
    message: string,
  ) {
    super(message);
  }
}

export async function createOrganization(
  store: ResourceStore,
  input: NewOrganization,
): Promise<Organization> {
  const spec = OrganizationSpecSchema.parse({
    displayName: input.displayName ?? input.name,
    plan: input.plan,
    limits: OrganizationLimitsSchema.parse(input.limits ?? {}),
  });
  try {
    return await store.create(OrganizationType, {
      apiVersion: apiVersionOf(OrganizationType),
      kind: OrganizationType.kind,
      metadata: { name: input.name },
      spec,
    });
  } catch (err) {
    if (isStoreError(err, 'AlreadyExists'))
      throw new OrganizationAdminError('conflict', `organization ${input.name} already exists`);
    throw err;
  }
}

export async function listOrganizations(store: ResourceStore): Promise<Organization[]> {
  const { items } = await store.list(OrganizationType);
  return items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

export async function getOrganization(store: ResourceStore, name: string): Promise<Organization> {
  const org = await store.get(OrganizationType, undefined, name);
  if (org === undefined) throw new OrganizationAdminError('not_found', `no organization ${name}`);
  return org;
}

const changeOrganization = (
  store: ResourceStore,
  name: string,
  change: (org: Organization) => Organization,
): Promise<Organization> =>
  retryOnConflict(async () => store.replace(OrganizationType, change(await getOrganization(store, name))));

export const setOrganizationLimits = (
  store: ResourceStore,
  name: string,
  limits: OrganizationLimitsPatch,
): Promise<Organization> =>
  changeOrganization(store, name, (org) => ({
    ...org,
    spec: { ...org.spec, limits: OrganizationLimitsSchema.parse({ ...org.spec.limits, ...limits }) },
  }));

export const setOrganizationPlan = (
  store: ResourceStore,
  name: string,
  plan: z.infer<typeof OrganizationPlanSchema>,
): Promise<Organization> =>
  changeOrganization(store, name, (org) => ({ ...org, spec: { ...org.spec, plan } }));

export async function deleteOrganization(store: ResourceStore, name: string): Promise<void> {
  try {
    await store.delete(OrganizationType, undefined, name);
  } catch (err) {
    if (isStoreError(err, 'NotFound'))
      throw new OrganizationAdminError('not_found', `no organization ${name}`);
    throw err;
  }
}
