// The KubeVirt workspace disk, built (or reused from its cache) by images/vm/build-guest-image.sh,
// the command a platform team runs, after the Debian packages it and QEMU need.
import { join } from 'node:path';
import { z } from 'zod';
import { ensureTestPackages } from '../../support/test-packages.js';
import { runKeyValueScript } from '../../support/key-value-script.js';

const GuestImageSchema = z.object({
  AGENTRY_GUEST_KEY: z.string().regex(/^[0-9a-f]{12}$/),
  AGENTRY_GUEST_QCOW2: z.string().endsWith('.qcow2'),
  AGENTRY_GUEST_CONTAINERDISK: z.string(),
  AGENTRY_GUEST_CONTAINERDISK_ARCHIVE: z.string().endsWith('.tar'),
});

export interface GuestImage {
  /** The qcow2 disk (read-only here: each VM boots an overlay of it). */
  qcow2: string;
  /** The containerDisk image (qcow2 under /disk/) and its docker-archive. */
  containerDisk: string;
  containerDiskArchive: string;
}

/** Installs the packages and builds the image; progress on stderr. */
export async function buildGuestImage(workdir: string): Promise<GuestImage> {
  await ensureTestPackages(
    (cause) => new Error('the VM tests could not install the Debian packages they need', { cause }),
  );
  const built = GuestImageSchema.parse(
    await runKeyValueScript(
      'images/vm/build-guest-image.sh',
      [],
      join(workdir, 'guest-image.env'),
      (exitCode) =>
        new Error(
          `images/vm/build-guest-image.sh failed (exit ${String(exitCode)}); its output above says why`,
        ),
    ),
  );
  return {
    qcow2: built.AGENTRY_GUEST_QCOW2,
    containerDisk: built.AGENTRY_GUEST_CONTAINERDISK,
    containerDiskArchive: built.AGENTRY_GUEST_CONTAINERDISK_ARCHIVE,
  };
}
