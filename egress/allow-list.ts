import type { EgressRule } from '../crds/egress.js';

/** The ports a rule without `ports` allows: HTTPS and HTTP (and so only TLS or HTTP through a tunnel). */
export const DEFAULT_EGRESS_PORTS: readonly number[] = [443, 80];

/** How a destination matched the allow list. */
export type AllowDecision =
  | { allowed: false }
  /** explicitPort: a rule names the port itself, so a tunnel may carry any protocol (ssh on 22). */
  | { allowed: true; explicitPort: boolean };

/** Lowercase, without the trailing dot of a fully qualified name. */
export const normalizeHost = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** `github.com` matches itself only; `*.github.com` matches its subdomains, never the bare name. */
export function hostMatches(pattern: string, host: string): boolean {
  const wanted = normalizeHost(pattern);
  const name = normalizeHost(host);
  if (!wanted.startsWith('*.')) return wanted === name;
  const suffix = wanted.slice(1); // ".github.com"
  return name.length > suffix.length && name.endsWith(suffix);
}

/** Whether `host:port` is on the union of `rules` (the installation's, the organization's, the workspace's). */
export function decide(rules: readonly EgressRule[], host: string, port: number): AllowDecision {
  let allowed = false;
  for (const rule of rules) {
    if (!hostMatches(rule.host, host)) continue;
    if (rule.ports?.includes(port) === true) return { allowed: true, explicitPort: true };
    if (rule.ports === undefined && DEFAULT_EGRESS_PORTS.includes(port)) allowed = true;
  }
  return allowed ? { allowed: true, explicitPort: false } : { allowed: false };
}
