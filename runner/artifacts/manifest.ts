import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { Logger } from '../../platform/log.js';
import type { ArtifactFile } from '../../platform/runner-protocol.js';
import { PARTIAL_SUFFIX, artifactPathProblem, artifactsRoot, isMissing, lstatOrUndefined } from './paths.js';
import { sameFile } from './files.js';
import type { FileIdentity } from './files.js';

/** Hex MD5 of a file, streamed (never the whole file in memory). */
export async function md5OfFile(path: string): Promise<string> {
  const hash = createHash('md5');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

const CachedHashSchema = z.object({
  size: z.number(),
  mtimeMs: z.number(),
  ctimeMs: z.number(),
  ino: z.number(),
  md5: z.string(),
});
type CachedHash = z.infer<typeof CachedHashSchema>;
const HashCacheSchema = z.record(z.string(), CachedHashSchema);

/**
 * Lists the regular files under /code/artifacts with their MD5s. Symbolic links and special files
 * are skipped (never followed: a link could point anywhere on the workspace), as are names the
 * artifact rules refuse and uploads in progress. MD5s are cached by (size, mtime), in memory and in
 * the state directory, so listing an unchanged tree of gigabytes hashes nothing, also on the first
 * sync after the workspace woke up.
 */
export class ArtifactManifest {
  private hashes: Map<string, CachedHash> | undefined;
  private dirty = false;
  private readonly cacheFile: string;

  constructor(
    private readonly workdir: string,
    stateDir: string,
    private readonly logger: Logger,
  ) {
    this.cacheFile = join(stateDir, 'artifacts', 'hashes.json');
  }

  async list(): Promise<ArtifactFile[]> {
    const hashes = await this.cache();
    const root = artifactsRoot(this.workdir);
    const rootStats = await lstatOrUndefined(root);
    const files: ArtifactFile[] = [];
    const seen = new Set<string>();
    if (rootStats?.isDirectory() === true) await this.walk(root, '', files, seen);
    for (const path of hashes.keys())
      if (!seen.has(path)) {
        hashes.delete(path);
        this.dirty = true;
      }
    await this.saveCache(hashes);
    return files.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  }

  private async cache(): Promise<Map<string, CachedHash>> {
    if (this.hashes !== undefined) return this.hashes;
    const text = await readFile(this.cacheFile, 'utf8').catch(() => '{}');
    let parsed: Record<string, CachedHash> = {};
    try {
      parsed = HashCacheSchema.parse(JSON.parse(text));
    } catch {
      this.logger.debug('the artifact hash cache is unreadable; hashing again');
    }
    this.hashes = new Map(Object.entries(parsed));
    return this.hashes;
  }

  /** A cache only: a torn or lost file means hashing again, so no fsync. */
  private async saveCache(hashes: Map<string, CachedHash>): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    const temporary = `${this.cacheFile}.${randomUUID()}.tmp`;
    try {
      await mkdir(join(this.cacheFile, '..'), { recursive: true });
      await writeFile(temporary, JSON.stringify(Object.fromEntries(hashes)));
      await rename(temporary, this.cacheFile);
    } catch (err) {
      await rm(temporary, { force: true });
      this.logger.debug({ err }, 'cannot save the artifact hash cache');
    }
  }

  /** Remembers the MD5 of a file the runner itself just wrote (saves hashing it again). */
  remember(path: string, file: FileIdentity, md5: string): void {
    this.hashes?.set(path, {
      size: file.size,
      mtimeMs: file.mtimeMs,
      ctimeMs: file.ctimeMs,
      ino: file.ino,
      md5,
    });
    this.dirty = true;
  }

  private async walk(dir: string, prefix: string, files: ArtifactFile[], seen: Set<string>): Promise<void> {
    // A directory that vanished meanwhile lists nothing; one that cannot be read fails the listing:
    // listing it as empty would make the sync delete its files from object storage.
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
      if (isMissing(err)) return [];
      throw err;
    });
    for (const entry of entries) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        await this.walk(join(dir, entry.name), path, files, seen);
        continue;
      }
      if (!entry.isFile() || entry.name.endsWith(PARTIAL_SUFFIX)) continue; // links, sockets, fifos
      if (artifactPathProblem(path) !== undefined) {
        this.logger.debug({ path }, 'skipping an artifact whose name the artifact rules refuse');
        continue;
      }
      const file = await this.describe(join(dir, entry.name), path);
      if (file === undefined) continue;
      seen.add(path);
      files.push(file);
    }
  }

  /** Size and MD5 of one file; undefined when it vanished or changed into something else meanwhile. */
  private async describe(absolute: string, path: string): Promise<ArtifactFile | undefined> {
    const stats = await lstatOrUndefined(absolute);
    if (stats?.isFile() !== true) return undefined;
    const cached = this.hashes?.get(path);
    if (cached !== undefined && sameFile(cached, stats)) return { path, size: stats.size, md5: cached.md5 };
    let md5: string;
    try {
      md5 = await md5OfFile(absolute);
    } catch (err) {
      if (isMissing(err)) return undefined; // deleted while being read: the next sync sees what is there
      throw err; // unreadable: listing it as absent would delete it from object storage
    }
    this.remember(path, stats, md5);
    return { path, size: stats.size, md5 };
  }
}
