import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PreviewActivity } from '../../api/agent-computer/previews/preview-activity.js';
import { AgentComputerSpecSchema, AgentComputerType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

const workspace = (name: string): AgentComputer => ({
  apiVersion: apiVersionOf(AgentComputerType),
  kind: AgentComputerType.kind,
  metadata: { name, namespace: 'agentry-org-acme', uid: `uid-${name}` },
  spec: AgentComputerSpecSchema.parse({}),
});

describe('preview activity stamps', () => {
  it('forgets the stamps older than a minute once many workspaces were stamped, keeping memory bounded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-preview-activity-'));
    // An empty store: every workspace is already gone, so the background stamps write nothing.
    const store = await EmbeddedStore.open(dir);
    try {
      let clock = Date.parse('2030-01-01T00:00:00Z');
      const activity = new PreviewActivity(store, createLogger({ level: 'silent' }), () => new Date(clock));
      for (let i = 0; i < 1100; i++) activity.record(workspace(`ws-${i}`));
      expect(activity.remembered).toBe(1100);
      clock += 61_000;
      activity.record(workspace('fresh'));
      expect(activity.remembered).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the background stamps settle
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
