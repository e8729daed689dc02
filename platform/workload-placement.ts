// Where the operator's workloads (runner and lake pods or VMs) may run and what else they may reach,
// as a platform team sets it: dedicated nodes (node selector, tolerations) and in-cluster services
// the default egress policy would cut off (an S3-compatible store such as MinIO on a private address).
import { z } from 'zod';

/** A Kubernetes toleration (core/v1 Toleration), checked here so a typo stops start-up, not the pod. */
export const TolerationSchema = z.strictObject({
  key: z.string().min(1).optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: z.number().int().optional(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

export const NodeSelectorSchema = z.record(z.string().min(1), z.string());

/** Nodes the workloads go to; both empty: wherever the scheduler puts them. */
export interface WorkloadPlacement {
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
}

/** One extra egress destination of workloads: an address range, on every port or on one. */
export interface EgressAllowance {
  cidr: string;
  port?: number | undefined;
}

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function parseCidr(text: string): string | undefined {
  const match = IPV4_CIDR.exec(text);
  if (match === null) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const bits = Number(match[5]);
  return octets.every((octet) => octet <= 255) && bits <= 32 ? text : undefined;
}

/** `10.250.0.1/32:9000` or `10.0.0.0/8`: a CIDR with an optional port. */
export function parseEgressAllowance(text: string): EgressAllowance | undefined {
  const [cidrText = '', portText, ...rest] = text.trim().split(':');
  const cidr = parseCidr(cidrText);
  if (cidr === undefined || rest.length > 0) return undefined;
  if (portText === undefined) return { cidr };
  const port = Number(portText);
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? { cidr, port } : undefined;
}

/** Parses a JSON setting against a schema, reporting bad JSON as a zod issue like any other. */
export const jsonSetting = <T extends z.ZodType>(schema: T, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** A comma separated list setting: each entry parsed by `parse`, the first it rejects named as not `what`. */
function listSetting<T>(parse: (entry: string) => T | undefined, what: string) {
  return z
    .string()
    .default('')
    .transform((text, ctx): T[] => {
      const parsed: T[] = [];
      for (const entry of text.split(',').map((part) => part.trim())) {
        if (entry === '') continue;
        const value = parse(entry);
        if (value === undefined) {
          ctx.addIssue({ code: 'custom', message: `${entry} is not ${what}` });
          return z.NEVER;
        }
        parsed.push(value);
      }
      return parsed;
    });
}

/** Comma separated CIDR[:port] entries. */
export const EgressAllowSetting = listSetting(parseEgressAllowance, 'an IPv4 CIDR with an optional :port');

/**
 * Comma separated IPv4 CIDRs of DNS servers workloads query besides pods in kube-system: a
 * resolver on the node (NodeLocal DNSCache's 169.254.20.10, a node-local CoreDNS), which their
 * NetworkPolicy would otherwise refuse like any private or link-local address.
 */
export const DnsServersSetting = listSetting(parseCidr, 'an IPv4 CIDR');
