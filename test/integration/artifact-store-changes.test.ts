// Whether a prompt's dispatch must first push the store's side of the workspace's artifacts
// (operator/task/artifacts/store-changes.ts), read from the AgentComputer's marks.
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ARTIFACTS_CHANGED_ANNOTATION,
  ARTIFACTS_UNCHANGED,
  ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION,
  AgentComputerType,
} from '../../crds/index.js';
import { StoreSideChanges } from '../../operator/task/artifacts/store-changes.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { agentComputerObject } from '../support/workspace-objects.js';

const NAMESPACE = 'agentry-org-acme';
const NOW = Date.parse('2026-11-26T12:00:00Z');

async function withWorkspace(
  annotations: Record<string, string>,
  check: (changes: StoreSideChanges, recreate: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-store-changes-'));
  const store = await EmbeddedStore.open(dir);
  const object = agentComputerObject(NAMESPACE, 'box');
  const create = () =>
    store.create(AgentComputerType, { ...object, metadata: { ...object.metadata, annotations } });
  try {
    await create();
    await check(new StoreSideChanges(store, () => NOW), async () => {
      await store.delete(AgentComputerType, NAMESPACE, 'box');
      await create();
    });
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const read = async (changes: StoreSideChanges) => {
  const mark = await changes.read(NAMESPACE, 'box');
  if (mark === undefined) throw new Error('the workspace is gone');
  return mark;
};

describe('a dispatch pushes the store side first', () => {
  it('never for a workspace Agentry made and nobody changed', async () => {
    await withWorkspace({ [ARTIFACTS_CHANGED_ANNOTATION]: ARTIFACTS_UNCHANGED }, async (changes) => {
      expect(changes.owed(NAMESPACE, 'box', await read(changes))).toBe(false);
    });
  });

  it('once per change marked by the API server', async () => {
    await withWorkspace({ [ARTIFACTS_CHANGED_ANNOTATION]: 'change-1' }, async (changes) => {
      const mark = await read(changes);
      expect(changes.owed(NAMESPACE, 'box', mark)).toBe(true);
      changes.record(NAMESPACE, 'box', mark);
      expect(changes.owed(NAMESPACE, 'box', await read(changes))).toBe(false);
    });
  });

  it('again for a workspace made anew under the same name', async () => {
    await withWorkspace({ [ARTIFACTS_CHANGED_ANNOTATION]: 'change-1' }, async (changes, recreate) => {
      changes.record(NAMESPACE, 'box', await read(changes));
      await recreate();
      expect(changes.owed(NAMESPACE, 'box', await read(changes))).toBe(true);
    });
  });

  it('every time while a signed upload URL may still be used, a minute of clock skew included', async () => {
    const expiry = new Date(NOW - 30_000).toISOString(); // expired 30 s ago by this clock
    await withWorkspace(
      {
        [ARTIFACTS_CHANGED_ANNOTATION]: ARTIFACTS_UNCHANGED,
        [ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION]: expiry,
      },
      async (changes) => {
        const mark = await read(changes);
        changes.record(NAMESPACE, 'box', mark);
        expect(changes.owed(NAMESPACE, 'box', mark)).toBe(true);
      },
    );
  });

  it('no more once the upload URLs expired a minute ago', async () => {
    const expiry = new Date(NOW - 61_000).toISOString();
    await withWorkspace(
      {
        [ARTIFACTS_CHANGED_ANNOTATION]: ARTIFACTS_UNCHANGED,
        [ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION]: expiry,
      },
      async (changes) => {
        expect(changes.owed(NAMESPACE, 'box', await read(changes))).toBe(false);
      },
    );
  });
});
