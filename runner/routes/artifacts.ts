import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../../platform/log.js';
import { ArtifactBaseRequestSchema } from '../../platform/runner-protocol.js';
import type { ArtifactManifest as ManifestBody } from '../../platform/runner-protocol.js';
import type { ArtifactBaseFile } from '../artifacts/base.js';
import { ArtifactDigestError, deleteArtifact, openArtifact, writeArtifact } from '../artifacts/files.js';
import type { ArtifactManifest } from '../artifacts/manifest.js';
import { ArtifactPathError } from '../artifacts/paths.js';

export interface ArtifactRoutesOptions {
  workdir: string;
  manifest: ArtifactManifest;
  base: ArtifactBaseFile;
  logger: Logger;
}

/** A base lists every artifact path with two short digests: 1 MiB holds thousands. */
const BASE_BODY_LIMIT = '8mb';

const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** `*path` arrives as decoded segments; joined back, it is the artifact's relative path. */
function pathOf(req: Request): string {
  const raw: unknown = req.params.path;
  return Array.isArray(raw) ? raw.map(String).join('/') : String(raw);
}

/** Refusals the caller can act on; anything else goes to the app's error handler (500). */
function answerKnown(err: unknown, res: Response, next: NextFunction): void {
  if (err instanceof ArtifactPathError) {
    res.status(err.status).json(errorBody(err.status === 400 ? 'validation_error' : 'conflict', err.message));
    return;
  }
  if (err instanceof ArtifactDigestError) {
    res.status(400).json(errorBody('bad_digest', err.message));
    return;
  }
  next(err);
}

/**
 * The runner's artifact routes (platform/runner-protocol.ts): the operator reads the manifest and
 * the bytes, and writes what was uploaded through the API. Every path is checked against the
 * artifact rules, and no symbolic link is followed.
 */
export function artifactRoutes(options: ArtifactRoutesOptions): Router {
  const { workdir, manifest, base } = options;
  const router = express.Router();

  router.get('/v1/artifacts', async function listArtifacts(_req: Request, res: Response) {
    const body: ManifestBody = { files: await manifest.list(), base: await base.read() };
    res.json(body);
  });

  router.put(
    '/v1/artifacts-base',
    express.json({ limit: BASE_BODY_LIMIT }),
    async function writeBase(req: Request, res: Response) {
      const parsed = ArtifactBaseRequestSchema.safeParse(req.body);
      if (!parsed.success) {
        res
          .status(400)
          .json(errorBody('validation_error', 'The body must be { base: { <path>: { md5, etag } } }'));
        return;
      }
      await base.write(parsed.data.base);
      res.status(204).end();
    },
  );

  router.get(
    '/v1/artifacts/*path',
    async function readArtifact(req: Request, res: Response, next: NextFunction) {
      const path = pathOf(req);
      let opened;
      try {
        opened = await openArtifact(workdir, path);
      } catch (err) {
        answerKnown(err, res, next);
        return;
      }
      if (opened === undefined) {
        res.status(404).json(errorBody('not_found', `No artifact ${JSON.stringify(path)}`));
        return;
      }
      res
        .status(200)
        .set({ 'content-type': 'application/octet-stream', 'content-length': String(opened.size) });
      // The handle is the file that was checked: a link swapped in now changes nothing.
      await pipeline(opened.handle.createReadStream(), res).catch((err: unknown) => {
        options.logger.debug({ err, path }, 'sending an artifact ended early');
      });
    },
  );

  router.put(
    '/v1/artifacts/*path',
    async function putArtifact(req: Request, res: Response, next: NextFunction) {
      const path = pathOf(req);
      try {
        const written = await writeArtifact(workdir, path, req, req.get('content-md5'));
        manifest.remember(path, written, written.md5);
        res.status(200).json({ path: written.path, size: written.size, md5: written.md5 });
      } catch (err) {
        answerKnown(err, res, next);
      }
    },
  );

  router.delete(
    '/v1/artifacts/*path',
    async function removeArtifact(req: Request, res: Response, next: NextFunction) {
      try {
        await deleteArtifact(workdir, pathOf(req));
        res.status(204).end();
      } catch (err) {
        answerKnown(err, res, next);
      }
    },
  );

  return router;
}
