import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTEXT_LAKE_NAME, ContextLakeSpecSchema, ContextLakeType } from '../../crds/index.js';
import { LAKE_INSTRUCTIONS, instructionsWithLake } from '../../operator/task/lake-instructions.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

const NAMESPACE = 'agentry-org-acme';
const LAKE_ENV = {
  AGENTRY_LAKE_URL: 'http://127.0.0.1:8080/v1/context-lake',
  AGENTRY_LAKE_TOKEN: 'agp1.x.y',
};

let dir = '';
let store: EmbeddedStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-instructions-'));
  store = await EmbeddedStore.open(dir);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const createLake = () =>
  store.create(ContextLakeType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'ContextLake',
    metadata: { name: CONTEXT_LAKE_NAME, namespace: NAMESPACE },
    spec: ContextLakeSpecSchema.parse({ config: { name: 'acme', datasets: [], views: [] } }),
  });

describe('instructionsWithLake', () => {
  it("adds the lake client after the workspace's own instructions when the organization has a lake", async () => {
    await createLake();
    const text = await instructionsWithLake(store, NAMESPACE, 'Run the tests first.\n', LAKE_ENV);
    expect(text).toBe(`Run the tests first.\n\n${LAKE_INSTRUCTIONS}`);
    expect(text).toContain('agentry lake query');
    expect(text).toContain('agentry lake mcp');
  });

  it('says nothing of a lake the organization does not have', async () => {
    expect(await instructionsWithLake(store, NAMESPACE, 'Own text', LAKE_ENV)).toBe('Own text');
    expect(await instructionsWithLake(store, NAMESPACE, undefined, LAKE_ENV)).toBeUndefined();
  });

  it('says nothing of the lake to a prompt without the lake client variables (no API server address)', async () => {
    await createLake();
    expect(await instructionsWithLake(store, NAMESPACE, '', {})).toBeUndefined();
  });
});
