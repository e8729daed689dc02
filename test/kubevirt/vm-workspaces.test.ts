// An agent computer as a real KubeVirt VM, driven through the installed API server only: CDI imports
// the root disk from our VM disk image, KubeVirt (built here, emulated with QEMU TCG: this machine
// has no hardware virtualization) boots it, cloud-init starts our runner, a prompt runs in the guest,
// a preview URL reaches a dev server in the guest, hibernation halts the VM and keeps its disk, a
// resume boots the same disk. Nothing is faked: KWOK does not manage the real node, and no stage
// stands in for virt-controller.
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  api,
  createPreview,
  createTask,
  createWorkspace,
  deleteWorkspaceEntirely,
  deployment,
  devServerPrompt,
  eventually,
  kubectl,
  objectNames,
  streamTask,
  streamText,
  throughPreview,
  waitForWorkspace,
} from '../realnode/support.js';

/** Emulated boots are slow (docs/runtimes.md: about a minute to several on two shared cores). */
const VM_START_MS = 20 * 60_000;
const DEV_PORT = 3000;
const selectorOf = (id: string): string => `agentry.dev/agent-computer=${id}`;
const created: string[] = [];
const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

const VmSchema = z.object({
  spec: z.object({ runStrategy: z.string() }),
  status: z.looseObject({ printableStatus: z.string().optional() }).optional(),
});
const VmiListSchema = z.object({
  items: z.array(
    z.object({
      status: z.looseObject({ phase: z.string().optional(), nodeName: z.string().optional() }).optional(),
    }),
  ),
});
const DataVolumeListSchema = z.object({
  items: z.array(z.object({ status: z.looseObject({ phase: z.string().optional() }).optional() })),
});

async function vm(id: string): Promise<z.infer<typeof VmSchema>> {
  const d = deployment();
  return VmSchema.parse(JSON.parse(await kubectl(['get', 'vm', id, '-n', d.orgNamespace, '-o', 'json'])));
}

async function vmis(id: string): Promise<z.infer<typeof VmiListSchema>['items']> {
  const d = deployment();
  const raw = await kubectl(['get', 'vmi', '-n', d.orgNamespace, '-l', selectorOf(id), '-o', 'json']);
  return VmiListSchema.parse(JSON.parse(raw)).items;
}

afterAll(async () => {
  for (const id of created)
    await api(`/v1/agent-computers/${id}`, { method: 'DELETE' }).catch(() => undefined);
}, 300_000);

describe('an agent computer as a KubeVirt VM on the real node (emulated)', () => {
  let id = '';

  it(
    'becomes ready: CDI imports its disk from our image, KubeVirt boots it, our runner answers',
    async () => {
      const started = Date.now();
      id = await createWorkspace('vm workspace');
      created.push(id);
      const ready = await waitForWorkspace(id, 'ready', VM_START_MS);
      process.stderr.write(`VM workspace: create → ready in ${seconds(started)} s (emulated)\n`);
      expect(ready.provisionError).toBeNull();
      expect((await vm(id)).spec.runStrategy).toBe('Always');
      const [instance] = await vmis(id);
      expect(instance?.status?.phase).toBe('Running');
      expect(instance?.status?.nodeName).toBe(deployment().nodeName);
      const d = deployment();
      const raw = await kubectl(['get', 'datavolume', '-n', d.orgNamespace, '-o', 'json']);
      const disks = DataVolumeListSchema.parse(JSON.parse(raw)).items;
      expect(disks.map((disk) => disk.status?.phase)).toContain('Succeeded');
    },
    VM_START_MS + 60_000,
  );

  it('runs a prompt inside the guest, a KubeVirt machine under QEMU, leaving a file in /code', async () => {
    const started = Date.now();
    const task = await createTask({
      workspaceId: id,
      prompt: [
        'cat /sys/class/dmi/id/sys_vendor',
        'systemd-detect-virt || true',
        'echo kept > /code/kept.txt && echo wrote it',
      ].join('; '),
    });
    const stream = await streamTask(task.id, { timeoutMs: 300_000 });
    process.stderr.write(`VM workspace: a shell prompt in ${seconds(started)} s (emulated)\n`);
    expect(stream.done?.status).toBe('completed');
    // KubeVirt's SMBIOS manufacturer, and systemd's view from inside: a QEMU virtual machine.
    const lines = streamText(stream).split('\n');
    expect(lines).toContain('KubeVirt');
    expect(lines).toContain('qemu');
    expect(lines).toContain('wrote it');
  }, 360_000);

  it('serves a preview of a dev server a prompt started in the guest, through the API server', async () => {
    const task = await createTask({ workspaceId: id, prompt: devServerPrompt(DEV_PORT) });
    const stream = await streamTask(task.id, { timeoutMs: 300_000 });
    expect(stream.done?.status).toBe('completed');
    expect(streamText(stream)).toContain('listening');
    // The API server connects to the address the VM's instance reports; masquerade forwards the port.
    const answer = await throughPreview(await createPreview(id, DEV_PORT), 'in/the/guest');
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^hello from \S+ at \/in\/the\/guest$/);
  }, 360_000);

  it('hibernates: the VM is halted and its instance gone, the disk kept', async () => {
    const d = deployment();
    const started = Date.now();
    const stop = await api(`/v1/agent-computers/${id}/stop`, { method: 'POST' });
    expect(stop.status).toBe(202);
    await waitForWorkspace(id, 'hibernated', 300_000);
    process.stderr.write(`VM workspace: stop → hibernated in ${seconds(started)} s (emulated)\n`);
    expect((await vm(id)).spec.runStrategy).toBe('Halted');
    await eventually('the VM instance gone', async () => ((await vmis(id)).length === 0 ? true : undefined));
    expect(await objectNames('pvc', d.orgNamespace, selectorOf(id))).not.toHaveLength(0);
  }, 360_000);

  it(
    'resumes for a new prompt, which boots the same disk and sees the file the last one left',
    async () => {
      const started = Date.now();
      const task = await createTask({ workspaceId: id, prompt: 'cat /code/kept.txt' });
      const stream = await streamTask(task.id, { timeoutMs: VM_START_MS });
      process.stderr.write(`VM workspace: resume (prompt sent → done) in ${seconds(started)} s (emulated)\n`);
      expect(stream.done?.status).toBe('completed');
      expect(streamText(stream)).toContain('kept');
      expect((await vm(id)).spec.runStrategy).toBe('Always');
    },
    VM_START_MS + 60_000,
  );

  it('is deleted with its VM, disk, Service, NetworkPolicy and Secrets', async () => {
    await deleteWorkspaceEntirely(id, 'vm,vmi,datavolume,pvc,service,networkpolicy,secret', 300_000);
    expect((await api(`/v1/agent-computers/${id}`)).status).toBe(404);
  }, 360_000);
});
