// An agent computer's life on the real node, driven through the installed API server only: a real
// Pod runs our runner image, hibernation deletes the Pod and keeps the disk, a redeploy is a new Pod
// on the same disk, deletion removes everything. Nothing here is faked: KWOK does not manage the node.
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  api,
  createTask,
  createWorkspace,
  deleteWorkspaceEntirely,
  deployment,
  eventually,
  kubectl,
  objectNames,
  pods,
  runnerPod,
  streamTask,
  streamText,
  waitForWorkspace,
} from './support.js';

const selectorOf = (id: string): string => `agentry.dev/agent-computer=${id}`;
const created: string[] = [];

afterAll(async () => {
  for (const id of created)
    await api(`/v1/agent-computers/${id}`, { method: 'DELETE' }).catch(() => undefined);
}, 120_000);

describe('an agent computer on the real node', () => {
  let id = '';

  it('becomes ready with a real runner Pod of our image on the real node', async () => {
    id = await createWorkspace('real node workspace');
    created.push(id);
    const ready = await waitForWorkspace(id, 'ready');
    expect(ready.provisionError).toBeNull();
    const { pod, processes } = await runnerPod(id);
    expect(pod?.spec.nodeName).toBe(deployment().nodeName);
    expect(pod?.status?.phase).toBe('Running');
    expect(processes).toMatch(/agentry runner/);
  }, 300_000);

  it('runs a prompt that leaves a file in /code, then hibernates: the Pod is gone, the disk stays', async () => {
    const d = deployment();
    const task = await createTask({ workspaceId: id, prompt: 'echo kept > /code/kept.txt && echo wrote it' });
    const stream = await streamTask(task.id);
    expect(stream.done?.status).toBe('completed');
    expect(streamText(stream)).toContain('wrote it');

    const stop = await api(`/v1/agent-computers/${id}/stop`, { method: 'POST' });
    expect(stop.status).toBe(202);
    await waitForWorkspace(id, 'hibernated');
    await eventually('the runner pod deleted', async () =>
      (await pods(d.orgNamespace, selectorOf(id))).length === 0 ? true : undefined,
    );
    expect(await objectNames('pvc', d.orgNamespace, selectorOf(id))).toHaveLength(1);
  }, 300_000);

  it('resumes for a new prompt, which sees the file the last one left', async () => {
    const task = await createTask({ workspaceId: id, prompt: 'cat /code/kept.txt' });
    const stream = await streamTask(task.id);
    expect(stream.done?.status).toBe('completed');
    expect(streamText(stream)).toContain('kept');
    expect((await waitForWorkspace(id, 'ready')).status).toBe('ready');
  }, 300_000);

  it('redeploys as a new Pod on the same disk when spec.restartedAt changes', async () => {
    const d = deployment();
    const [before] = await pods(d.orgNamespace, selectorOf(id));
    await kubectl([
      'patch',
      'agentcomputer',
      id,
      '-n',
      d.orgNamespace,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { restartedAt: new Date().toISOString() } }),
    ]);
    const after = await eventually('a new runner pod running', async () => {
      const current = await pods(d.orgNamespace, selectorOf(id));
      const fresh = current.find((pod) => pod.metadata.uid !== before?.metadata.uid);
      return current.length === 1 && fresh?.status?.phase === 'Running' ? fresh : undefined;
    });
    expect(after.metadata.name).not.toBe(before?.metadata.name);
    await waitForWorkspace(id, 'ready');
    const task = await createTask({ workspaceId: id, prompt: 'cat /code/kept.txt' });
    expect(streamText(await streamTask(task.id))).toContain('kept');
  }, 300_000);

  it('is deleted with every object made for it: Pod, disk, Service, NetworkPolicy, token Secret', async () => {
    await deleteWorkspaceEntirely(id, 'pod,pvc,service,networkpolicy,secret');
    expect((await api(`/v1/agent-computers/${id}`)).status).toBe(404);
  }, 300_000);
});
