import type { Spicepod } from '../../crds/context-lake/types.js';
import type { Principal } from '../auth/principal.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';
import {
  addDataset,
  addView,
  assertSameName,
  patchConfig,
  removeDataset,
  removeView,
  replaceDataset,
  replaceView,
} from './edit-config.js';
import type { ConfigEdit } from './edit-config.js';
import { cachedLake, configOf } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import type { LakeWriter } from './lake-writer.js';
import { presentConfig } from './present.js';
import {
  ConfigResponseSchema,
  DatasetBodySchema,
  DatasetListSchema,
  NameParamsSchema,
  OkSchema,
  PatchConfigBodySchema,
  PatchedConfigSchema,
  SavedDatasetSchema,
  SavedViewSchema,
  ViewBodySchema,
  ViewListSchema,
} from './schemas.js';

export const LAKE_TAG = 'Context lake';
export const LAKE_PREFIX = '/v1/context-lake';

export interface LakeConfigRoutesDeps extends LakeStoreDeps {
  writer: LakeWriter;
}

/** The current configuration, from the cache (reads never go to the store). */
const currentConfig = (deps: LakeStoreDeps, principal: Principal): Spicepod =>
  configOf(principal, cachedLake(deps.readModel, principal));

/** POST or PUT of a dataset: the dataset as stored, and its notification set-up when it asked for one. */
async function saveDataset(
  deps: LakeConfigRoutesDeps,
  principal: Principal,
  name: string,
  edit: (config: Spicepod) => ConfigEdit,
) {
  const saved = await deps.writer.save(principal, edit);
  const dataset = saved.config.datasets.find((candidate) => candidate.name === name);
  if (dataset === undefined) throw new Error(`the saved configuration lacks the dataset ${name}`);
  const setup = saved.notifications[name];
  return { ok: true as const, dataset, ...(setup === undefined ? {} : { notifications: setup }) };
}

/** POST or PUT of a view: the view as stored. */
async function saveView(
  deps: LakeConfigRoutesDeps,
  principal: Principal,
  name: string,
  edit: (config: Spicepod) => ConfigEdit,
) {
  const saved = await deps.writer.save(principal, edit);
  const view = saved.config.views.find((candidate) => candidate.name === name);
  if (view === undefined) throw new Error(`the saved configuration lacks the view ${name}`);
  return { ok: true as const, view };
}

const getConfigRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: `${LAKE_PREFIX}/config`,
    operationId: 'getContextLakeConfig',
    summary: 'The whole configuration, as YAML and as an object (credentials as ${secrets:...} references)',
    tag: LAKE_TAG,
    scope: 'context-lake:read',
    responses: { 200: { description: 'The configuration', schema: ConfigResponseSchema } },
    handler: ({ principal }) => ({ status: 200, body: presentConfig(currentConfig(deps, principal)) }),
  });

const patchConfigRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'patch',
    path: `${LAKE_PREFIX}/config`,
    operationId: 'patchContextLakeConfig',
    summary:
      'Partial update: removes, then adds, then updates (each given field replaced whole); all or nothing',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    body: PatchConfigBodySchema,
    responses: { 200: { description: 'Applied', schema: PatchedConfigSchema } },
    handler: async ({ body, principal }) => {
      const saved = await deps.writer.save(principal, (config) => patchConfig(config, body));
      return {
        status: 200,
        body: { ok: true, config: presentConfig(saved.config).config, notifications: saved.notifications },
      };
    },
  });

const listDatasetsRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: `${LAKE_PREFIX}/datasets`,
    operationId: 'listContextLakeDatasets',
    summary: 'The datasets of the configuration',
    tag: LAKE_TAG,
    scope: 'context-lake:read',
    promptToken: true,
    responses: { 200: { description: 'The datasets', schema: DatasetListSchema } },
    handler: ({ principal }) => ({
      status: 200,
      body: { datasets: currentConfig(deps, principal).datasets },
    }),
  });

const addDatasetRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: `${LAKE_PREFIX}/datasets`,
    operationId: 'addContextLakeDataset',
    summary: 'Add a dataset (params validated per connector; literal credentials move into a Secret)',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    body: DatasetBodySchema,
    responses: { 201: { description: 'Added', schema: SavedDatasetSchema } },
    handler: async ({ body, principal }) => ({
      status: 201,
      body: await saveDataset(deps, principal, body.name, (config) => addDataset(config, body)),
    }),
  });

const replaceDatasetRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'put',
    path: `${LAKE_PREFIX}/datasets/:name`,
    operationId: 'replaceContextLakeDataset',
    summary: 'Replace a dataset (the body names the same dataset as the path)',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    params: NameParamsSchema,
    body: DatasetBodySchema,
    responses: { 200: { description: 'Replaced', schema: SavedDatasetSchema } },
    handler: async ({ params, body, principal }) => {
      assertSameName(params.name, body.name);
      return {
        status: 200,
        body: await saveDataset(deps, principal, body.name, (config) => replaceDataset(config, body)),
      };
    },
  });

const removeDatasetRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'delete',
    path: `${LAKE_PREFIX}/datasets/:name`,
    operationId: 'removeContextLakeDataset',
    summary: 'Remove a dataset (and its stored credentials)',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    params: NameParamsSchema,
    responses: { 200: { description: 'Removed', schema: OkSchema } },
    handler: async ({ params, principal }) => {
      await deps.writer.save(principal, (config) => removeDataset(config, params.name));
      return { status: 200, body: { ok: true } };
    },
  });

const listViewsRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: `${LAKE_PREFIX}/views`,
    operationId: 'listContextLakeViews',
    summary: 'The views (named SQL) of the configuration',
    tag: LAKE_TAG,
    scope: 'context-lake:read',
    promptToken: true,
    responses: { 200: { description: 'The views', schema: ViewListSchema } },
    handler: ({ principal }) => ({ status: 200, body: { views: currentConfig(deps, principal).views } }),
  });

const addViewRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: `${LAKE_PREFIX}/views`,
    operationId: 'addContextLakeView',
    summary: 'Add a view',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    body: ViewBodySchema,
    responses: { 201: { description: 'Added', schema: SavedViewSchema } },
    handler: async ({ body, principal }) => ({
      status: 201,
      body: await saveView(deps, principal, body.name, (config) => addView(config, body)),
    }),
  });

const replaceViewRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'put',
    path: `${LAKE_PREFIX}/views/:name`,
    operationId: 'replaceContextLakeView',
    summary: 'Replace a view (the body names the same view as the path)',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    params: NameParamsSchema,
    body: ViewBodySchema,
    responses: { 200: { description: 'Replaced', schema: SavedViewSchema } },
    handler: async ({ params, body, principal }) => {
      assertSameName(params.name, body.name);
      return {
        status: 200,
        body: await saveView(deps, principal, body.name, (config) => replaceView(config, body)),
      };
    },
  });

const removeViewRoute = (deps: LakeConfigRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'delete',
    path: `${LAKE_PREFIX}/views/:name`,
    operationId: 'removeContextLakeView',
    summary: 'Remove a view',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    params: NameParamsSchema,
    responses: { 200: { description: 'Removed', schema: OkSchema } },
    handler: async ({ params, principal }) => {
      await deps.writer.save(principal, (config) => removeView(config, params.name));
      return { status: 200, body: { ok: true } };
    },
  });

/** GET and edits of the configuration: /config, /datasets, /views (docs/api.md#context-lake). */
export const lakeConfigRoutes = (deps: LakeConfigRoutesDeps): RouteDefinition[] => [
  getConfigRoute(deps),
  patchConfigRoute(deps),
  listDatasetsRoute(deps),
  addDatasetRoute(deps),
  replaceDatasetRoute(deps),
  removeDatasetRoute(deps),
  listViewsRoute(deps),
  addViewRoute(deps),
  replaceViewRoute(deps),
  removeViewRoute(deps),
];
