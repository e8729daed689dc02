// Workspaces whose Pod cannot start on the real node: the kubelet's real reasons (an image that
// cannot be pulled, a container that cannot run its command) become the agent computer's `error`
// with a reason a person can act on, within a bounded time.
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { stringify } from 'yaml';
import { api, deployment, kubectl, waitForWorkspace } from './support.js';

const names: string[] = [];
afterAll(async () => {
  for (const name of names)
    await api(`/v1/agent-computers/${name}`, { method: 'DELETE' }).catch(() => undefined);
}, 120_000);

/** An AgentComputer as a GitOps user writes it, with an image of their choosing. */
async function applyWorkspace(image: string): Promise<string> {
  const d = deployment();
  const name = randomUUID();
  names.push(name);
  const manifest = {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name, namespace: d.orgNamespace },
    spec: { displayName: `broken ${image}`, runtime: 'pod', operatingMode: 'Running', resources: { image } },
  };
  await kubectl(['apply', '-f', '-'], stringify(manifest));
  return name;
}

describe('a workspace that cannot start on the real node', () => {
  it('reports error naming the image when the image cannot be pulled', async () => {
    // A registry on this machine's loopback that does not exist: the pull fails at once.
    const image = 'localhost/agentry-no-such-image:1';
    const ws = await waitForWorkspace(await applyWorkspace(image), 'error', 180_000);
    expect(ws.provisionError).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(ws.provisionError).toContain(image);
    expect(ws.provisionError).toContain('spec.resources.image');
  }, 300_000);

  it('reports error saying the image needs `agentry` when the container cannot run it', async () => {
    // The pause image exists on the node but has no `agentry` to run.
    const image = 'registry.k8s.io/pause:3.10';
    const ws = await waitForWorkspace(await applyWorkspace(image), 'error', 180_000);
    expect(ws.provisionError).toMatch(/RunContainerError|CrashLoopBackOff|CreateContainerError/);
    expect(ws.provisionError).toContain('agentry');
  }, 300_000);
});
