// Names the cluster runtimes derive for a workload's objects: digests, Service names and their URLs.
import { createHash } from 'node:crypto';

/** The first characters of a SHA-256: a stable, name-safe digest. */
export const shortHash = (text: string, length = 10): string =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * `<name>-<suffix>` as an RFC 1035 label (what a Service name must be): AgentComputer names are UUIDs
 * that often start with a digit, which a Service refuses, so those get an `ac-` prefix; names too
 * long for 63 characters are cut and keep a hash of the whole.
 */
export function serviceName(name: string, suffix: string): string {
  const wanted = /^[a-z]/.test(name) ? `${name}-${suffix}` : `ac-${name}-${suffix}`;
  if (wanted.length <= 63) return wanted;
  const hash = shortHash(wanted, 8);
  return `${wanted.slice(0, 63 - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}

/** Cluster-internal URL of a workload's runner Service. */
export const serviceEndpoint = (service: string, namespace: string, port: number): string =>
  `http://${service}.${namespace}.svc:${port}`;
