import { z } from 'zod';
import type { Organization } from '../../crds/index.js';
import { organizationNamespace } from '../../crds/index.js';
import {
  NewOrganizationSchema,
  OrganizationAdminError,
  OrganizationLimitsPatchSchema,
  OrganizationPlanSchema,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizations,
  setOrganizationLimits,
  setOrganizationPlan,
} from '../../platform/organization-admin.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ApiError } from '../errors.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';

/**
 * Installation administration of organizations (`installation:admin` only; `*` does not grant it):
 * what `agentry orgs` does, over HTTP, so an embedded installation can host several organizations.
 */

export const OrganizationRecordSchema = z.object({
  name: z.string(),
  displayName: z.string(),
  plan: OrganizationPlanSchema,
  namespace: z.string(),
  limits: z.object({ agentComputers: z.number(), concurrentTasks: z.number(), webhooks: z.number() }),
  createdAt: z.string().nullable(),
});

const present = (org: Organization): z.infer<typeof OrganizationRecordSchema> => ({
  name: org.metadata.name,
  displayName: org.spec.displayName,
  plan: org.spec.plan,
  namespace: organizationNamespace(org),
  limits: org.spec.limits,
  createdAt: org.metadata.creationTimestamp ?? null,
});

const NameParamsSchema = z.object({ name: z.string().describe("The organization's name") });
const PatchOrganizationBodySchema = z.object({
  plan: OrganizationPlanSchema.optional(),
  limits: OrganizationLimitsPatchSchema.optional(),
});

/** The admin layer's errors in the API's shape. */
async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof OrganizationAdminError)
      throw err.code === 'not_found'
        ? ApiError.notFound('Organization')
        : new ApiError('conflict', err.message);
    throw err;
  }
}

const admin = { tag: 'Administration', scope: 'installation:admin' } as const;

export function adminOrganizationRoutes(deps: { store: ResourceStore }): RouteDefinition[] {
  const { store } = deps;
  const one = { 200: { description: 'The organization', schema: OrganizationRecordSchema } };
  return [
    defineRoute({
      ...admin,
      method: 'get',
      path: '/v1/admin/organizations',
      operationId: 'adminListOrganizations',
      summary: 'List every organization of the installation',
      responses: {
        200: {
          description: 'The organizations',
          schema: z.object({ data: z.array(OrganizationRecordSchema) }),
        },
      },
      handler: async () => ({ status: 200, body: { data: (await listOrganizations(store)).map(present) } }),
    }),
    defineRoute({
      ...admin,
      method: 'post',
      path: '/v1/admin/organizations',
      operationId: 'adminCreateOrganization',
      summary: 'Create an organization',
      body: NewOrganizationSchema,
      responses: { 201: { description: 'Created', schema: OrganizationRecordSchema } },
      handler: async ({ body }) => ({
        status: 201,
        body: present(await mapped(() => createOrganization(store, body))),
      }),
    }),
    defineRoute({
      ...admin,
      method: 'get',
      path: '/v1/admin/organizations/:name',
      operationId: 'adminGetOrganization',
      summary: 'Get one organization',
      params: NameParamsSchema,
      responses: one,
      handler: async ({ params }) => ({
        status: 200,
        body: present(await mapped(() => getOrganization(store, params.name))),
      }),
    }),
    defineRoute({
      ...admin,
      method: 'patch',
      path: '/v1/admin/organizations/:name',
      operationId: 'adminUpdateOrganization',
      summary: "Change an organization's plan or limits (limits not given stay)",
      params: NameParamsSchema,
      body: PatchOrganizationBodySchema,
      responses: one,
      handler: async ({ params, body }) => {
        let org = await mapped(() => getOrganization(store, params.name));
        if (body.limits !== undefined)
          org = await mapped(() => setOrganizationLimits(store, params.name, body.limits ?? {}));
        if (body.plan !== undefined)
          org = await mapped(() => setOrganizationPlan(store, params.name, body.plan ?? org.spec.plan));
        return { status: 200, body: present(org) };
      },
    }),
    defineRoute({
      ...admin,
      method: 'delete',
      path: '/v1/admin/organizations/:name',
      operationId: 'adminDeleteOrganization',
      summary: 'Delete an organization',
      params: NameParamsSchema,
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params }) => {
        await mapped(() => deleteOrganization(store, params.name));
        return { status: 204 };
      },
    }),
  ];
}
