// Jest global setup of the kubevirt project: the real node (kubelet root at /var/lib/kubelet, where
// virt-handler looks), KubeVirt and CDI built here and installed with emulation, then Agentry with
// the kubevirt runtime and our VM disk image.
import { tmpdir } from 'node:os';
import { ensureTestPackages } from '../../support/test-packages.js';
import { buildGuestImage } from '../../vm/support/guest-image.js';
import { toEnvState } from '../../realnode/harness/env.js';
import { setUpRealNodeProject } from '../../realnode/harness/project-setup.js';
import { buildKubevirt } from './builds.js';
import { installKubevirt } from './install-kubevirt.js';
import { writeKubevirtValues } from './values.js';

/** virt-handler reaches pods' volumes at this fixed path, whatever the kubelet's --root-dir. */
const KUBELET_ROOT = '/var/lib/kubelet';

export default async function globalSetup(): Promise<void> {
  // Beyond what every heavy project needs (installed by buildGuestImage): virt-launcher's cgo.
  await ensureTestPackages(
    (cause) => new Error('the kubevirt tests could not install libvirt-dev', { cause }),
    'scripts/kubevirt-packages.txt',
  );
  const guest = await buildGuestImage(tmpdir());
  const builds = await buildKubevirt(tmpdir());
  await setUpRealNodeProject(
    {
      imageArchives: [guest.containerDiskArchive, ...builds.archives],
      kubeletRoot: KUBELET_ROOT,
      // virt-handler mounts the kubelet root and /var/run/kubevirt with Bidirectional propagation,
      // and enters the mount namespace of PID 1 of its (host) PID namespace.
      sharedRootMount: true,
      containerdPidNamespace: true,
      // Real KubeVirt: no fake CRD, no stages playing virt-controller.
      fakeKubevirt: false,
      beforeInstall: async (node) => {
        await installKubevirt(toEnvState(node), builds);
        return [await writeKubevirtValues(node.workdir, guest.containerDisk)];
      },
    },
    { diskImage: guest.containerDisk },
  );
}
