import { z } from 'zod';
import type { AgentComputer, WorkspacePreview } from '../../../crds/index.js';
import type { PreviewTokens } from './token.js';

/** The preview record of docs/api.md#previews. */
export const PreviewRecordSchema = z.object({
  id: z.string(),
  port: z.number().int(),
  /** Signed; anyone holding it reaches the port until it expires or is revoked. */
  url: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});
export type PreviewRecord = z.infer<typeof PreviewRecordSchema>;
export const PreviewListSchema = z.object({ data: z.array(PreviewRecordSchema) });

/** Where preview URLs point: under the API's public URL (path mode) or at `<token>.<domain>` (host mode). */
export interface PreviewUrlSettings {
  publicUrl: string;
  /** AGENTRY_PREVIEW_DOMAIN: each preview gets its own host `<token>.<domain>` (wildcard DNS and TLS). */
  domain?: string | undefined;
}

/** The path prefix of path-mode preview URLs: `/previews/<token>/`. */
export const PREVIEW_PATH_PREFIX = '/previews/';

export function previewUrl(settings: PreviewUrlSettings, token: string): string {
  if (settings.domain === undefined) return `${settings.publicUrl}${PREVIEW_PATH_PREFIX}${token}/`;
  const scheme = new URL(settings.publicUrl).protocol;
  return `${scheme}//${token}.${settings.domain}/`;
}

export function presentPreview(
  ac: AgentComputer,
  preview: WorkspacePreview,
  tokens: PreviewTokens,
  settings: PreviewUrlSettings,
): PreviewRecord {
  const token = tokens.sign({
    namespace: ac.metadata.namespace ?? '',
    workspace: ac.metadata.name,
    previewId: preview.id,
    port: preview.port,
    expiresAt: preview.expiresAt,
  });
  return {
    id: preview.id,
    port: preview.port,
    url: previewUrl(settings, token),
    expiresAt: preview.expiresAt,
    createdAt: preview.createdAt,
  };
}
