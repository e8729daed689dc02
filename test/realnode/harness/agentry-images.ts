// Our three images for the real node: built (or reused from the cache) by images/build.sh, the same
// command a platform team runs, and handed to the node's containerd as docker-archive tars.
import { join } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../cluster/harness/tools.js';
import { runKeyValueScript } from '../../support/key-value-script.js';
import type { AgentryImages } from './install-agentry.js';

const BuildOutputSchema = z.object({
  AGENTRY_IMAGE_CONTROL_PLANE: z.string(),
  AGENTRY_IMAGE_CONTROL_PLANE_ARCHIVE: z.string(),
  AGENTRY_IMAGE_RUNNER: z.string(),
  AGENTRY_IMAGE_RUNNER_ARCHIVE: z.string(),
  AGENTRY_IMAGE_LAKE: z.string(),
  AGENTRY_IMAGE_LAKE_ARCHIVE: z.string(),
});

export interface BuiltImages {
  images: AgentryImages;
  archives: string[];
}

/** Runs images/build.sh (progress on our stderr) and reads the KEY=value lines it wrote. */
export async function buildAgentryImages(workdir: string): Promise<BuiltImages> {
  const built = BuildOutputSchema.parse(
    await runKeyValueScript(
      'images/build.sh',
      [],
      join(workdir, 'images.env'),
      (exitCode) =>
        new HarnessError(`images/build.sh failed (exit ${String(exitCode)}); its output above says why`),
    ),
  );
  return {
    images: {
      controlPlane: built.AGENTRY_IMAGE_CONTROL_PLANE,
      runner: built.AGENTRY_IMAGE_RUNNER,
      lake: built.AGENTRY_IMAGE_LAKE,
    },
    archives: [
      built.AGENTRY_IMAGE_CONTROL_PLANE_ARCHIVE,
      built.AGENTRY_IMAGE_RUNNER_ARCHIVE,
      built.AGENTRY_IMAGE_LAKE_ARCHIVE,
    ],
  };
}
