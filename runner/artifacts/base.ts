import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../platform/log.js';
import { ensureDirectory, writeFileAtomic } from '../../platform/store/embedded/files.js';
import { ArtifactBaseSchema } from '../../platform/runner-protocol.js';
import type { ArtifactBase } from '../../platform/runner-protocol.js';

/**
 * The sync base: what the workspace and object storage agreed on at the last sync, kept in the
 * runner's state directory (never under /code, where the agent could edit it). Written atomically
 * and durably (mode 0600, fsynced, renamed into place, its directory fsynced).
 */
export class ArtifactBaseFile {
  private readonly dir: string;
  private readonly path: string;

  constructor(
    stateDir: string,
    private readonly logger: Logger,
  ) {
    this.dir = join(stateDir, 'artifacts');
    this.path = join(this.dir, 'base.json');
  }

  /** The base; empty when none was written yet, or when the file is unreadable (then everything syncs again). */
  async read(): Promise<ArtifactBase> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch {
      return {};
    }
    try {
      return ArtifactBaseSchema.parse(JSON.parse(text));
    } catch (err) {
      this.logger.warn({ err }, 'the artifact sync base is unreadable; starting from an empty one');
      return {};
    }
  }

  async write(base: ArtifactBase): Promise<void> {
    await ensureDirectory(this.dir);
    await writeFileAtomic(this.path, JSON.stringify(base));
  }
}
