// The helm values a platform team adds for VM workspaces on this cluster (layered over the real-node
// values of test/realnode/harness/install-agentry.ts): the kubevirt runtime by default, our VM disk
// image pulled by the node (no registry here), disks on the node's local-path class.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { VM_STORAGE_CLASS } from './install-kubevirt.js';

/** Guest size: one vCPU (emulated, each is a host thread on a two-core machine), 1.5 GiB. */
export const VM_CPU = '1';
export const VM_MEMORY = '1536Mi';
/** Above the disk image's 2.34 GiB virtual size; cloud-init grows the root filesystem to it. */
export const VM_DISK = '4Gi';

export function kubevirtValues(diskImage: string): unknown {
  return {
    runtime: { default: 'kubevirt', enabled: ['kubevirt', 'pod'] },
    workloads: {
      runnerImage: diskImage,
      vmDiskPullMethod: 'node',
      storageClass: VM_STORAGE_CLASS,
      cpu: VM_CPU,
      memory: VM_MEMORY,
      disk: VM_DISK,
    },
    api: { replicas: 1 },
    operator: { replicas: 1 },
  };
}

export async function writeKubevirtValues(workdir: string, diskImage: string): Promise<string> {
  const file = join(workdir, 'values-kubevirt-real-node.yaml');
  await writeFile(file, stringify(kubevirtValues(diskImage)));
  return file;
}
