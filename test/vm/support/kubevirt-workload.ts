// What the kubevirt runtime writes for an AgentComputer, rendered by the runtime itself into an
// embedded store: the cloud-init Secret the guest boots with, and the VirtualMachine whose CPU,
// memory and disk size the QEMU machine copies.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentComputerSpecSchema, AgentComputerType, SecretType, secretValue } from '../../../crds/index.js';
import type { WorkloadResources } from '../../../crds/index.js';
import { VirtualMachineType } from '../../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime, kubevirtWorkloadNames } from '../../../operator/runtimes/kubevirt.js';
import { quantityValue } from '../../../operator/runtimes/quantity.js';
import { createLogger } from '../../../platform/log.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';

/** The parts of the VM spec a QEMU machine needs (the runtime's own shape, checked). */
const VmSpecSchema = z.object({
  dataVolumeTemplates: z.array(
    z.object({
      spec: z.object({
        storage: z.object({ resources: z.object({ requests: z.object({ storage: z.string() }) }) }),
      }),
    }),
  ),
  template: z.object({
    spec: z.object({
      domain: z.object({
        cpu: z.object({ cores: z.number().int().min(1) }),
        memory: z.object({ guest: z.string() }),
      }),
      volumes: z.array(z.looseObject({ name: z.string() })),
    }),
  }),
});

export interface KubevirtWorkload {
  /** The Secret's `userdata`: the guest's cloud-config. */
  userData: string;
  /** NoCloud meta-data as KubeVirt writes it (instance id `<vmi>.<namespace>`, stable across boots). */
  metaData: string;
  cores: number;
  memoryMiB: number;
  diskBytes: number;
  /** The VM's volume names in order (the root disk, then the cloud-init disk). */
  volumes: string[];
}

/** Applies the kubevirt runtime to a new AgentComputer in a throwaway store and reads what it wrote. */
export async function renderKubevirtWorkload(
  name: string,
  token: string,
  resources: WorkloadResources,
): Promise<KubevirtWorkload> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-vm-render-'));
  const store = await EmbeddedStore.open(dir);
  const namespace = 'agentry-org-vm';
  try {
    const runtime = new KubevirtRuntime({
      store,
      controlNamespace: 'agentry-system',
      defaultImage: 'localhost/agentry-runner-disk:test',
      defaults: { cpu: '2', memory: '2Gi', disk: '8Gi' },
      logger: createLogger({ level: 'silent' }),
    });
    const ac = await store.create(AgentComputerType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'AgentComputer',
      metadata: { name, namespace },
      spec: AgentComputerSpecSchema.parse({ runtime: 'kubevirt', resources }),
    });
    await runtime.apply(ac, { tokenSecretName: `${name}-token`, token }, new AbortController().signal);
    const names = kubevirtWorkloadNames(ac);
    const secret = await store.get(SecretType, namespace, names.cloudInit);
    const userData = secret === undefined ? undefined : secretValue(secret, 'userdata');
    if (userData === undefined) throw new Error(`the runtime wrote no ${names.cloudInit} userdata`);
    const vm = await store.get(VirtualMachineType, namespace, names.vm);
    const spec = VmSpecSchema.parse(vm?.spec);
    const { domain, volumes } = spec.template.spec;
    const disk = spec.dataVolumeTemplates[0]?.spec.storage.resources.requests.storage ?? '';
    return {
      userData,
      metaData: `instance-id: ${names.vm}.${namespace}\nlocal-hostname: ${names.vm}\n`,
      cores: domain.cpu.cores,
      memoryMiB: Math.floor(quantityValue(domain.memory.guest) / 2 ** 20),
      diskBytes: quantityValue(disk),
      volumes: volumes.map((v) => v.name),
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
