import { expect } from '@jest/globals';
import { z } from 'zod';
import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../../crds/context-lake/types.js';
import type { ContextLake, ContextLakeStatus } from '../../../crds/context-lake/types.js';
import { call, eventually } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

/** Helpers shared by the context-lake API tests (not a test file itself). */

export const lakeNamespace = (org: string): string => `agentry-org-${org}`;

/** docs/api.md#errors: the data-context error body, exactly these fields. */
export const LakeErrorSchema = z.strictObject({
  error: z.string().min(1),
  code: z.string(),
  errors: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
});
export type LakeErrorBody = z.infer<typeof LakeErrorSchema>;

/** Calls /v1/context-lake<path> and answers status and parsed JSON. */
export async function lake(
  api: TestApi,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await call(api, `/v1/context-lake${path}`, {
    method,
    ...(key === undefined ? {} : { key }),
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown), text };
}

/** Expects an error answer with this status and code; returns the parsed body. */
export async function lakeError(
  answer: Promise<{ status: number; json: unknown }>,
  status: number,
  code: string,
): Promise<LakeErrorBody> {
  const { status: got, json } = await answer;
  const body = LakeErrorSchema.parse(json);
  expect({ status: got, code: body.code }).toEqual({ status, code });
  return body;
}

export async function storedLake(api: TestApi, org: string): Promise<ContextLake | undefined> {
  return api.store.get(ContextLakeType, lakeNamespace(org), CONTEXT_LAKE_NAME);
}

/** Plays the operator: writes the lake's status and waits until the API's cache has it. */
export async function writeLakeStatus(
  api: TestApi,
  org: string,
  status: (lake: ContextLake) => ContextLakeStatus,
): Promise<ContextLake> {
  const current = await storedLake(api, org);
  if (current === undefined) throw new Error(`org ${org} has no lake`);
  const written = await api.store.replaceStatus(ContextLakeType, { ...current, status: status(current) });
  await eventually(
    () =>
      api.readModel.contextLakes.get(lakeNamespace(org), CONTEXT_LAKE_NAME)?.metadata.resourceVersion ===
      written.metadata.resourceVersion,
  );
  return written;
}

/** A Ready condition for the lake's current generation, as the operator writes it. */
export const readyCondition = (lake: ContextLake) => ({
  type: 'Ready',
  status: 'True' as const,
  observedGeneration: lake.metadata.generation,
  lastTransitionTime: new Date().toISOString(),
  reason: 'Loaded',
  message: 'the lake server serves its configuration',
});

/** A public S3 parquet dataset: valid with no params beyond the defaults. */
export const s3Dataset = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  from: `s3://agentry-test-bucket/${name}.parquet`,
  ...extra,
});
