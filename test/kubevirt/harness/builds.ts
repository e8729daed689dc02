// KubeVirt and CDI as this machine builds them (images/kubevirt/build.sh, images/cdi/build.sh: from
// their Go modules, images from Debian packages, cached by version), and our VM disk image
// (images/vm/build-guest-image.sh): the image archives for the node and the install manifests.
import { join } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../cluster/harness/tools.js';
import { runKeyValueScript } from '../../support/key-value-script.js';

const KubevirtBuildSchema = z
  .record(z.string(), z.string())
  .and(z.object({ KUBEVIRT_OPERATOR_MANIFEST: z.string() }));
const CdiBuildSchema = z.record(z.string(), z.string()).and(z.object({ CDI_OPERATOR_MANIFEST: z.string() }));

export interface KubevirtBuilds {
  /** docker-archives of every KubeVirt and CDI image, for the node's containerd. */
  archives: string[];
  /** virt-operator's install manifest (CRD, RBAC, Deployment) for registry localhost/kubevirt. */
  kubevirtOperatorManifest: string;
  /** cdi-operator's install manifest. */
  cdiOperatorManifest: string;
}

const archivesOf = (built: Record<string, string>): string[] =>
  Object.entries(built)
    .filter(([key]) => key.endsWith('_ARCHIVE'))
    .map(([, path]) => path);

async function runBuild(script: string, workdir: string, name: string): Promise<Record<string, string>> {
  return runKeyValueScript(
    script,
    [],
    join(workdir, `${name}.env`),
    (exitCode) => new HarnessError(`${script} failed (exit ${String(exitCode)}); its output above says why`),
  );
}

/** Builds (or reuses) KubeVirt's and CDI's images one after the other: each is two cores' worth of Go. */
export async function buildKubevirt(workdir: string): Promise<KubevirtBuilds> {
  const kubevirt = KubevirtBuildSchema.parse(await runBuild('images/kubevirt/build.sh', workdir, 'kubevirt'));
  const cdi = CdiBuildSchema.parse(await runBuild('images/cdi/build.sh', workdir, 'cdi'));
  return {
    archives: [...archivesOf(kubevirt), ...archivesOf(cdi)],
    kubevirtOperatorManifest: kubevirt.KUBEVIRT_OPERATOR_MANIFEST,
    cdiOperatorManifest: cdi.CDI_OPERATOR_MANIFEST,
  };
}
