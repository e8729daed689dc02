// Preview URLs (docs/api.md#previews) on the real node: a shell prompt starts a dev server in a real
// runner Pod, and the installed API server proxies a signed URL to the Pod's own IP, through the
// workspace's NetworkPolicy as kube-router enforces it. That policy admits the API server's Pods to
// the dev server's port and nothing else: a Pod of another namespace gets no connection.
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  api,
  createPreview,
  createTask,
  createWorkspace,
  deployment,
  devServerPrompt,
  kubectl,
  runnerPod,
  startProbePod,
  streamTask,
  streamText,
  throughPreview,
  waitForWorkspace,
} from './support.js';

const DEV_PORT = 3000;
const ErrorSchema = z.looseObject({ error: z.looseObject({ code: z.string(), message: z.string() }) });

const created: string[] = [];
const probes: { name: string; namespace: string }[] = [];

afterAll(async () => {
  for (const id of created)
    await api(`/v1/agent-computers/${id}`, { method: 'DELETE' }).catch(() => undefined);
  for (const { name, namespace } of probes)
    await kubectl(['delete', 'pod', name, '-n', namespace, '--ignore-not-found', '--wait=false']).catch(
      () => undefined,
    );
}, 120_000);

/** A probe Pod (startProbePod), removed after the file. */
async function probePod(
  name: string,
  namespace: string,
  labels: Record<string, string>,
): Promise<{ name: string; namespace: string }> {
  probes.push({ name, namespace });
  await startProbePod(name, namespace, labels);
  return { name, namespace };
}

/** Whether the Pod gets a TCP connection to host:port within 5 s (bash's /dev/tcp). */
async function connects(
  from: { name: string; namespace: string },
  host: string,
  port: number,
): Promise<string> {
  const script = `if timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null; then echo open; else echo closed; fi`;
  return (await kubectl(['exec', '-n', from.namespace, from.name, '--', 'bash', '-c', script])).trim();
}

describe('a preview URL on the real node', () => {
  let id = '';
  let podName = '';
  let podIp = '';

  it('proxies to a dev server a prompt started in the runner Pod', async () => {
    id = await createWorkspace('previewed workspace');
    created.push(id);
    await waitForWorkspace(id, 'ready');
    const task = await createTask({ workspaceId: id, prompt: devServerPrompt(DEV_PORT) });
    const stream = await streamTask(task.id);
    expect(stream.done?.status).toBe('completed');
    expect(streamText(stream)).toContain('listening');

    const url = await createPreview(id, DEV_PORT);
    const { pod } = await runnerPod(id);
    podName = pod?.metadata.name ?? '';
    podIp = pod?.status?.podIP ?? '';
    const answer = await throughPreview(url, 'some/page?x=1');
    expect(answer).toEqual({ status: 200, text: `hello from ${podName} at /some/page?x=1` });
  }, 300_000);

  it('answers 502 naming the port when nothing in the workspace listens on it', async () => {
    const answer = await throughPreview(await createPreview(id, 3999));
    expect(answer.status).toBe(502);
    expect(ErrorSchema.parse(JSON.parse(answer.text)).error.message).toContain('3999');
  }, 120_000);

  it("admits only the API server's Pods to the dev server's port", async () => {
    expect(podIp).not.toBe('');
    const d = deployment();
    const outsider = await probePod('preview-outsider', 'default', { app: 'preview-probe' });
    // The control: a Pod the policy admits (it carries the API server's label in its namespace).
    const lookalike = await probePod('preview-api-lookalike', d.namespace, {
      'app.kubernetes.io/name': 'agentry-api',
    });
    expect({
      outsider: await connects(outsider, podIp, DEV_PORT),
      lookalike: await connects(lookalike, podIp, DEV_PORT),
    }).toEqual({ outsider: 'closed', lookalike: 'open' });
  }, 300_000);
});
