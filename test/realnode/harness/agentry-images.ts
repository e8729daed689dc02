// Our three images for the real node: built (or reused from the cache) by images/build.sh, the same
// command a platform team runs, and handed to the node's containerd as docker-archive tars.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../cluster/harness/tools.js';
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
  const outFile = join(workdir, 'images.env');
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', ['images/build.sh', '--out', outFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (exitCode !== 0) {
    throw new HarnessError(`images/build.sh failed (exit ${String(exitCode)}); its output above says why`);
  }
  const lines = (await readFile(outFile, 'utf8')).split('\n').filter((line) => line.includes('='));
  const built = BuildOutputSchema.parse(
    Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
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
