import { createHash } from 'node:crypto';
import { secretValue } from '../../crds/index.js';
import type { Secret, Spicepod } from '../../crds/index.js';
import { secretReferenceOf } from '../../platform/lake-config/dataset-source.js';

/**
 * The spicepod as the lake server receives it: every `${secrets:<key>}` param replaced by the value
 * of that key in the lake's credentials Secret (CONTEXT_LAKE_SECRET_NAME). The lake server holds no
 * cluster credentials, so the operator resolves them; the values live only in this object, in the
 * request to the lake and in the Secret, never in a resource, a log or an event.
 */
export type ResolvedLakeConfig =
  | {
      ok: true;
      config: Spicepod;
      /** The resolved values, to redact them from anything the lake says back. */
      secretValues: readonly string[];
      /** Changes when the config or a value it uses changes: a rotated credential is pushed again. */
      digest: string;
    }
  /** Keys referenced but absent from the Secret (or the Secret itself is absent). Names only. */
  | { ok: false; missingKeys: readonly string[] };

export function resolveLakeConfig(config: Spicepod, secret: Secret | undefined): ResolvedLakeConfig {
  const missing = new Set<string>();
  const values = new Set<string>();
  const datasets = config.datasets.map((dataset) => {
    if (dataset.params === undefined) return dataset;
    const params: Record<string, string> = {};
    for (const [param, value] of Object.entries(dataset.params)) {
      const key = secretReferenceOf(value);
      if (key === undefined) {
        params[param] = value;
        continue;
      }
      const resolved = secret === undefined ? undefined : secretValue(secret, key);
      if (resolved === undefined) missing.add(key);
      else {
        params[param] = resolved;
        values.add(resolved);
      }
    }
    return { ...dataset, params };
  });
  if (missing.size > 0) return { ok: false, missingKeys: [...missing].sort() };
  const resolved = { ...config, datasets };
  const digest = createHash('sha256').update(JSON.stringify(resolved)).digest('hex');
  return { ok: true, config: resolved, secretValues: [...values], digest };
}

/** Shorter values could match ordinary words; credentials are longer than this. */
const MIN_REDACTED_LENGTH = 4;

/**
 * `text` with every credential value replaced: the lake server's error messages are its own and
 * may quote what it was given (an S3 error naming the access key, say).
 */
export function redactSecrets(text: string, secretValues: readonly string[]): string {
  let redacted = text;
  for (const value of secretValues) {
    if (value.length >= MIN_REDACTED_LENGTH) redacted = redacted.split(value).join('[redacted]');
  }
  return redacted;
}
