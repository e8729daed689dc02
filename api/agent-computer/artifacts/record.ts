import { z } from 'zod';
import type { ObjectInfo } from '../../../platform/objectstore/types.js';
import { checkArtifactName } from '../../../platform/objectstore/artifact-names.js';
import { listEnvelopeSchema } from '../../pagination.js';

/** The artifact record of docs/api.md#files-and-artifacts. */
export const ArtifactRecordSchema = z.object({
  filename: z.string(),
  size: z.number().int(),
  contentType: z.string(),
  /** Quoted, as the ETag header carries it. */
  etag: z.string(),
  updatedAt: z.string(),
});
export type ArtifactRecord = z.infer<typeof ArtifactRecordSchema>;
export const ArtifactPageSchema = listEnvelopeSchema(ArtifactRecordSchema);

/** An object under a workspace's artifact prefix, as clients see it: its name relative to the prefix. */
export const presentArtifact = (prefix: string, info: ObjectInfo): ArtifactRecord => ({
  filename: info.key.slice(prefix.length),
  size: info.size,
  contentType: info.contentType,
  etag: info.etag,
  updatedAt: new Date(info.updatedAt).toISOString(),
});

/** Newest first, then by name, so that pages are stable when several land in the same millisecond. */
export function newestArtifactFirst(a: ArtifactRecord, b: ArtifactRecord): number {
  const byTime = b.updatedAt.localeCompare(a.updatedAt);
  if (byTime !== 0) return byTime;
  if (a.filename === b.filename) return 0;
  return a.filename < b.filename ? -1 : 1;
}

/** A filename as clients send it (JSON bodies, route parameters): checked and NFC-normalized. */
export const ArtifactFilenameSchema = z
  .string()
  .max(4096)
  .transform((raw, ctx) => {
    const checked = checkArtifactName(raw);
    if (checked.ok) return checked.name;
    ctx.addIssue({ code: 'custom', message: `invalid artifact filename: ${checked.reason}` });
    return z.NEVER;
  });

/** A media type a client may set: `type/subtype` with optional parameters, printable ASCII only. */
export const ContentTypeSchema = z
  .string()
  .min(3)
  .max(255)
  .regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\x20-\x7e]*)?$/, 'must be a media type like text/plain');
