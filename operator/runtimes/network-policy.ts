// The NetworkPolicy every workload gets (docs/architecture.md#runtimes): only the API server and the operator may
// reach the runner, only the API server (the preview proxy) a workspace's other ports; the workload may reach the internet but not the cluster or cloud metadata.
import type { OwnerReference } from '../../crds/index.js';
import type { EgressAllowance } from '../../platform/workload-placement.js';
import type { NetworkPolicy } from './kube-objects.js';

/** Private (RFC 1918), link-local (cloud metadata at 169.254.169.254) and carrier-grade NAT ranges. */
export const BLOCKED_IPV4_RANGES: readonly string[] = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '100.64.0.0/10',
];

/** A destination range a workload may reach, minus the ranges carved out of it. */
export interface EgressRange {
  cidr: string;
  except?: readonly string[];
  /** One TCP port only; unset: every port. */
  port?: number | undefined;
}

/** Control-plane pods a workload may reach: these apps (`app.kubernetes.io/name`) on one port. */
export interface ControlPlaneEgress {
  /** The control-plane namespace. */
  namespace: string;
  apps: readonly string[];
  /** The pods' container port: its number, or its name (any Service port that maps to it). */
  port: number | string;
}

export interface EgressOptions {
  /** Where workloads may connect. Empty (with `dns` false and no pods): no egress at all. */
  allow: readonly EgressRange[];
  /** Allow DNS (53/UDP and 53/TCP) to pods in kube-system, which the blocked ranges would cut off. */
  dns: boolean;
  /** With `dns`: also these resolvers (CIDRs), e.g. a node-local cache (AGENTRY_WORKLOAD_DNS_SERVERS). */
  dnsServers?: readonly string[];
  /**
   * Control-plane pods reachable besides, which the blocked ranges would cut off: the API server
   * (model gateway, lake client: apiServerPods) and the egress proxy.
   */
  controlPlane?: readonly ControlPlaneEgress[];
}

/** The API pods' container port name in the chart (charts/agentry/templates/api-deployment.yaml). */
export const API_POD_PORT_NAME = 'http';

/** The pods of the API server (its model gateway, the lake's read routes for the lake client). */
export const API_SERVER_APPS: readonly string[] = ['agentry-api'];

/** The API server's pods on their port, as workspaces reach them (docs/adr/0009, docs/adr/0010). */
export const apiServerPods = (controlNamespace: string): ControlPlaneEgress => ({
  namespace: controlNamespace,
  apps: API_SERVER_APPS,
  port: API_POD_PORT_NAME,
});

/**
 * The internet over IPv4, not the cluster's private ranges nor metadata. IPv6 egress is denied
 * unless a range such as `::/0` is added: whether a cluster's IPv6 pod range is private cannot be
 * known from here.
 */
export const DEFAULT_EGRESS: EgressOptions = {
  allow: [{ cidr: '0.0.0.0/0', except: BLOCKED_IPV4_RANGES }],
  dns: true,
};

/** The default egress plus what the installation allows besides (e.g. an in-cluster S3 store) and its DNS servers. */
export function egressWith(
  allowances: readonly EgressAllowance[],
  dnsServers: readonly string[] = [],
): EgressOptions {
  return { ...DEFAULT_EGRESS, allow: [...DEFAULT_EGRESS.allow, ...allowances], dnsServers };
}

/** The `app.kubernetes.io/name` of the egress proxy's pods (the chart's `<fullname>-egress` Deployment). */
export const EGRESS_PROXY_APP = 'agentry-egress';

/**
 * A workspace's egress when the installation runs the egress proxy (docs/egress.md): DNS, the
 * proxy's pods on its port, and the installation's explicit exceptions (AGENTRY_WORKLOAD_EGRESS_ALLOW,
 * e.g. an in-cluster S3 store); nothing else, so a connection around the proxy fails.
 */
export function egressThroughProxy(
  controlNamespace: string,
  proxyPort: number,
  allowances: readonly EgressAllowance[],
  dnsServers: readonly string[] = [],
): EgressOptions {
  return {
    allow: [...allowances],
    dns: true,
    dnsServers,
    controlPlane: [{ namespace: controlNamespace, apps: [EGRESS_PROXY_APP], port: proxyPort }],
  };
}

/** The pods allowed to call runners: the API server (proxies streams) and the operator (dispatches). */
export const CONTROL_PLANE_APPS: readonly string[] = ['agentry-api', 'agentry-operator'];

/** The pods of the preview proxy (docs/api.md#previews): the only ones that reach a workspace's other ports. */
export const PREVIEW_PROXY_APPS: readonly string[] = ['agentry-api'];

export interface RunnerNetworkPolicyOptions {
  name: string;
  namespace: string;
  /** The workload's labels: the policy selects its pods by them and carries them itself. */
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
  /** Where the API server and operator run. */
  controlNamespace: string;
  /** The program's port, open to the API server and the operator. */
  port: number;
  /** Every other port open to the API server alone (the preview proxy); a lake server has none. */
  previewPorts?: boolean;
  egress?: EgressOptions | undefined;
}

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

const namespaceSelector = (namespace: string): { matchLabels: Record<string, string> } => ({
  matchLabels: { [NAMESPACE_NAME_LABEL]: namespace },
});

/** Pods of these apps, in the control-plane namespace only (both selectors in one peer). */
const controlPlanePeer = (controlNamespace: string, apps: readonly string[]): Record<string, unknown> => ({
  namespaceSelector: namespaceSelector(controlNamespace),
  podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: [...apps] }] },
});

function egressRules(egress: EgressOptions): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = egress.allow.map((range) => ({
    to: [
      {
        ipBlock:
          range.except === undefined || range.except.length === 0
            ? { cidr: range.cidr }
            : { cidr: range.cidr, except: [...range.except] },
      },
    ],
    ...(range.port === undefined ? {} : { ports: [{ protocol: 'TCP', port: range.port }] }),
  }));
  for (const target of egress.controlPlane ?? []) {
    rules.push({
      to: [controlPlanePeer(target.namespace, target.apps)],
      ports: [{ protocol: 'TCP', port: target.port }],
    });
  }
  if (egress.dns) {
    rules.push({
      to: [
        { namespaceSelector: namespaceSelector('kube-system') },
        ...(egress.dnsServers ?? []).map((cidr) => ({ ipBlock: { cidr } })),
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
  }
  return rules;
}

/** The NetworkPolicy of one workload; both policy types are listed, so an empty rule list denies all. */
export function runnerNetworkPolicy(options: RunnerNetworkPolicyOptions): NetworkPolicy {
  const egress = egressRules(options.egress ?? DEFAULT_EGRESS);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: { ...options.labels },
      ownerReferences: options.ownerReferences,
    },
    spec: {
      podSelector: { matchLabels: { ...options.labels } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          from: [controlPlanePeer(options.controlNamespace, CONTROL_PLANE_APPS)],
          ports: [{ protocol: 'TCP', port: options.port }],
        },
        // No ports: every port, to the preview proxy only.
        ...(options.previewPorts === true
          ? [{ from: [controlPlanePeer(options.controlNamespace, PREVIEW_PROXY_APPS)] }]
          : []),
      ],
      // Omitted rather than empty: the API server drops an empty list, and a comparison with what it
      // stored must not see a difference that is not there.
      ...(egress.length === 0 ? {} : { egress }),
    },
  };
}
