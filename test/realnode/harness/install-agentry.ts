// Installs Agentry on the real-node cluster the way a platform team does: `helm install` of
// charts/agentry with the pod profile, our own images (built by images/build.sh and imported into
// the node's containerd), S3 and SQS on moto, a bootstrap organization; then the first API key from
// inside an API pod, as NOTES.txt tells people to get it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import { run } from '../../cluster/harness/tools.js';
import { DEFAULT_EGRESS_ALLOW } from '../../../platform/egress-defaults.js';

export const RELEASE = 'agentry';
export const CONTROL_NAMESPACE = 'agentry-system';
export const E2E_ORG = 'e2e';
export const E2E_ORG_NAMESPACE = `agentry-org-${E2E_ORG}`;
/**
 * The namespace and Service names of the egress tests' web server (egress-on-the-real-node.test.ts):
 * the install allows the first through the egress proxy; the second is the same server, not allowed.
 */
export const EGRESS_TARGET_NAMESPACE = 'egress-e2e';
export const EGRESS_ALLOWED_HOST = `egress-allowed.${EGRESS_TARGET_NAMESPACE}.svc.cluster.local`;
export const EGRESS_DENIED_HOST = `egress-denied.${EGRESS_TARGET_NAMESPACE}.svc.cluster.local`;
export const EGRESS_TARGET_PORT = 8080;
/** The executor whose script the egress tests run: a model route to anthropic, its key in a Secret. */
export const KEY_PROBE_EXECUTOR = 'key-probe';

/** The label the real node carries; every Pod that must really run selects it. */
export const REAL_NODE_SELECTOR = { 'agentry.dev/real-node': 'true' } as const;

/** Where to install: the real-node cluster and the addresses its pods reach moto at. */
export interface InstallTarget {
  workdir: string;
  kubeconfig: string;
  /** Directories holding helm and kubectl. */
  toolsPath: string;
  /** The node bridge address pods reach node-local services at (DNS, the tests' webhook receiver). */
  nodeIp: string;
  /** The control-plane host's address, where pods reach moto (motoPodUrl). */
  controlPlaneIp: string;
  motoHostUrl: string;
  motoPodUrl: string;
}

/** Our three images, as containerd on the real node knows them. */
export interface AgentryImages {
  controlPlane: string;
  runner: string;
  lake: string;
}

/** What a test needs to act as an API client of the installed release. */
export interface AgentryDeployment {
  release: string;
  namespace: string;
  org: string;
  orgNamespace: string;
  /** The API Service's cluster address (kube-proxy on the host routes it to an API pod). */
  apiUrl: string;
  apiKey: string;
  bucket: string;
  images: AgentryImages;
}

const splitImage = (ref: string): { repository: string; tag: string } => {
  const colon = ref.lastIndexOf(':');
  if (colon <= ref.lastIndexOf('/')) throw new Error(`image ${ref} has no tag`);
  return { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
};

/** The values a platform team would write for this cluster (one node, S3 and SQS on moto). */
export function realNodeValues(target: InstallTarget, images: AgentryImages, bucket: string): unknown {
  const motoPort = new URL(target.motoPodUrl).port;
  const small = { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '768Mi' } };
  return {
    image: { ...splitImage(images.controlPlane), pullPolicy: 'Never' },
    runtime: { default: 'pod', enabled: ['pod'] },
    workloads: {
      runnerImage: images.runner,
      lakeImage: images.lake,
      cpu: '250m',
      memory: '512Mi',
      disk: '1Gi',
      nodeSelector: REAL_NODE_SELECTOR,
      // moto stands in for S3: the lake reaches it on the control-plane host, a private address
      // its NetworkPolicy allows only through this allowance.
      egressAllow: [`${target.controlPlaneIp}/32:${motoPort}`],
      // CoreDNS runs on the node, not as a kube-system pod: workspaces may query it there.
      dnsServers: [`${target.nodeIp}/32`],
    },
    objectStore: {
      type: 's3',
      s3: { bucket, region: 'us-east-1', endpoint: target.motoPodUrl, forcePathStyle: true },
    },
    aws: { accessKeyId: 'test', secretAccessKey: 'test' },
    sqs: { enabled: true, region: 'us-east-1', endpoint: target.motoPodUrl },
    // The tests' webhook receiver listens on the node bridge.
    webhooks: { allowPrivateTargets: true },
    // moto, the lake's S3, too.
    lake: { allowPrivateTargets: true },
    organizations: [{ name: E2E_ORG, displayName: 'End to end', plan: 'pro' }],
    // Workspaces reach out through the egress proxy only; the test's server is a private (pod
    // network) address, hence private targets.
    egress: {
      enabled: true,
      replicas: 1,
      allowPrivateTargets: true,
      allow: [...DEFAULT_EGRESS_ALLOW, { host: EGRESS_ALLOWED_HOST, ports: [EGRESS_TARGET_PORT] }],
      resources: small,
      nodeSelector: REAL_NODE_SELECTOR,
    },
    // A bash executor that declares a model route, as claude does: its key must never reach the workspace.
    executors: {
      definitions: [
        {
          name: KEY_PROBE_EXECUTOR,
          format: 'lines',
          command: 'bash',
          args: ['{promptFile}'],
          promptVia: 'file',
          env: {
            ANTHROPIC_API_KEY: {
              secretKeyRef: { name: 'agentry-executor-claude', key: 'ANTHROPIC_API_KEY' },
            },
          },
          modelGateway: [
            {
              provider: 'anthropic',
              keyVariables: ['ANTHROPIC_API_KEY'],
              baseUrlVariables: ['ANTHROPIC_BASE_URL'],
            },
          ],
        },
      ],
    },
    api: { replicas: 2, resources: small, nodeSelector: REAL_NODE_SELECTOR },
    operator: { replicas: 2, resources: small, nodeSelector: REAL_NODE_SELECTOR },
  };
}

function tools(target: InstallTarget): NodeJS.ProcessEnv {
  const home = join(target.workdir, 'helm');
  return {
    ...process.env,
    PATH: `${target.toolsPath}:${process.env.PATH ?? ''}`,
    KUBECONFIG: target.kubeconfig,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
  };
}

async function createBucket(target: InstallTarget, bucket: string): Promise<void> {
  const s3 = new S3Client({
    region: 'us-east-1',
    endpoint: target.motoHostUrl,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    s3.destroy();
  }
}

/**
 * `helm install` (with `valuesFiles` layered over the real-node values), then the first key from
 * inside an API pod, then the API Service's address.
 */
export async function installAgentry(
  target: InstallTarget,
  images: AgentryImages,
  valuesFiles: string[] = [],
): Promise<AgentryDeployment> {
  const env = tools(target);
  const bucket = 'agentry-e2e';
  await createBucket(target, bucket);
  const valuesFile = join(target.workdir, 'helm', 'values-real-node.yaml');
  await mkdir(join(target.workdir, 'helm'), { recursive: true });
  await writeFile(valuesFile, stringify(realNodeValues(target, images, bucket)));
  const started = Date.now();
  await run(
    'helm',
    [
      'install',
      RELEASE,
      'charts/agentry',
      '-n',
      CONTROL_NAMESPACE,
      '--create-namespace',
      '-f',
      valuesFile,
      ...valuesFiles.flatMap((file) => ['-f', file]),
    ].concat(['--wait', '--timeout', '5m']),
    { env, timeoutMs: 360_000 },
  );
  process.stderr.write(`helm install: Agentry ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const kubectl = (args: string[]): Promise<string> =>
    run('kubectl', ['--kubeconfig', target.kubeconfig, ...args], { env, timeoutMs: 120_000 });
  const apiKey = (
    await kubectl([
      '-n',
      CONTROL_NAMESPACE,
      'exec',
      `deploy/${RELEASE}-api`,
      '--',
      'agentry',
      'keys',
      'create',
      '--org',
      E2E_ORG,
      '--user',
      'admin',
    ])
  ).trim();
  if (!apiKey.startsWith('agk_')) throw new Error(`agentry keys create printed no key: ${apiKey}`);
  const clusterIp = (
    await kubectl([
      '-n',
      CONTROL_NAMESPACE,
      'get',
      'service',
      `${RELEASE}-api`,
      '-o',
      'jsonpath={.spec.clusterIP}',
    ])
  ).trim();
  return {
    release: RELEASE,
    namespace: CONTROL_NAMESPACE,
    org: E2E_ORG,
    orgNamespace: E2E_ORG_NAMESPACE,
    apiUrl: `http://${clusterIp}:8080`,
    apiKey,
    bucket,
    images,
  };
}
