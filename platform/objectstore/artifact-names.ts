/**
 * The artifact filename rules of docs/api.md#files-and-artifacts, in one place: the API checks every name a client
 * sends (upload, upload-url, download, delete) with them, and anything that syncs `/code/artifacts`
 * into object storage can use the same rules, so a name accepted on one side is accepted on the other.
 *
 * A filename is a relative `/`-separated path: non-empty segments, none `.` or `..`, no leading `/`,
 * no backslash (Windows separators would let `a\..\b` mean something else elsewhere), no NUL or other
 * control character (C0, DEL, C1), no unpaired surrogate (UTF-8 cannot encode one), at most
 * 1024 UTF-8 bytes in all and 255 per segment (what common filesystems allow). Names are compared and
 * stored NFC-normalized, so `é` typed precomposed or decomposed names one artifact.
 */

export const MAX_ARTIFACT_NAME_BYTES = 1024;
export const MAX_ARTIFACT_SEGMENT_BYTES = 255;

// eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udfff]/u;

export type ArtifactNameCheck = { ok: true; name: string } | { ok: false; reason: string };

/** Why `raw` is not an artifact filename, or its normalized form. Pure: no I/O. */
export function checkArtifactName(raw: string): ArtifactNameCheck {
  const reason = problemOf(raw);
  if (reason !== undefined) return { ok: false, reason };
  const name = raw.normalize('NFC');
  // Normalization can change byte lengths (rarely upward): the limits apply to what is stored.
  const sized = sizeProblemOf(name);
  return sized === undefined ? { ok: true, name } : { ok: false, reason: sized };
}

/** The normalized name, or a thrown `Error` with the reason (for callers that only pass known-good names). */
export function artifactName(raw: string): string {
  const checked = checkArtifactName(raw);
  if (!checked.ok) throw new Error(`invalid artifact filename: ${checked.reason}`);
  return checked.name;
}

function problemOf(raw: string): string | undefined {
  if (raw.length === 0) return 'must not be empty';
  if (raw.startsWith('/')) return 'must be a relative path, not an absolute one';
  if (raw.includes('\\')) return 'must not contain a backslash';
  if (CONTROL.test(raw)) return 'must not contain NUL or control characters';
  if (LONE_SURROGATE.test(raw)) return 'must be valid Unicode (no unpaired surrogate)';
  for (const segment of raw.split('/')) {
    if (segment === '') return 'must not contain empty path segments ("//" or a trailing "/")';
    if (segment === '.' || segment === '..') return 'must not contain "." or ".." segments';
  }
  return sizeProblemOf(raw);
}

function sizeProblemOf(name: string): string | undefined {
  if (Buffer.byteLength(name, 'utf8') > MAX_ARTIFACT_NAME_BYTES)
    return `must be at most ${MAX_ARTIFACT_NAME_BYTES} UTF-8 bytes`;
  if (name.split('/').some((segment) => Buffer.byteLength(segment, 'utf8') > MAX_ARTIFACT_SEGMENT_BYTES))
    return `each path segment must be at most ${MAX_ARTIFACT_SEGMENT_BYTES} UTF-8 bytes`;
  return undefined;
}
