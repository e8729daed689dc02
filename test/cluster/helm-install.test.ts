// `helm install` of charts/agentry into the real kube-apiserver of the test cluster. KWOK's fake
// nodes mark the pods Running and Ready without running a container (the images are not even
// pulled; they do not exist here), so this proves what the API server accepts and authorizes, not
// the images. RBAC is checked by asking the API server (SubjectAccessReview), and by running the
// real `agentry keys`, `agentry api` and `agentry operator` with the service accounts' own tokens.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ContextLakeType, NamespaceType, OrganizationType, SecretType } from '../../crds/index.js';
import { freeLoopbackPort } from '../support/free-port.js';
import { runAgentry } from '../support/spawn-cli.js';
import {
  CHART,
  accountKubeconfig,
  describeQuestion,
  helm,
  mayDo,
  startAgentry,
  stopAll,
} from './helm-support.js';
import type { AccessQuestion } from './helm-support.js';
import { clusterStore, eventually, kubectl } from './support.js';

const store = clusterStore();
const suffix = randomBytes(3).toString('hex');
// The release name holds "agentry", so objects are named <release>-api and <release>-operator.
const release = `agentry-${suffix}`;
const namespace = `agentry-helm-${suffix}`;
const org = `helm-${suffix}`;
const orgNamespace = `agentry-org-${org}`;
const otherNamespace = `elsewhere-${suffix}`;
const apiAccount = `${release}-api`;
const operatorAccount = `${release}-operator`;
const egressAccount = `${release}-egress`;
let uninstalled = false;
/** What `helm install` printed: NOTES.txt rendered for this release. */
let notes = '';
/** The `agentry api` started with the API account's token, and a key it accepts. */
let apiUrl = '';
let apiKey = '';

beforeAll(async () => {
  notes = await helm([
    'install',
    release,
    CHART,
    '--namespace',
    namespace,
    '--create-namespace',
    '--set',
    `organizations[0].name=${org}`,
    '--set',
    'organizations[0].plan=pro',
    '--wait',
    '--timeout',
    '4m',
  ]);
}, 300_000);

afterAll(async () => {
  await stopAll();
  if (!uninstalled) await helm(['uninstall', release, '--namespace', namespace]).catch(() => undefined);
  await store.delete(OrganizationType, undefined, org).catch(() => undefined);
  for (const name of [namespace, orgNamespace]) {
    await store.delete(NamespaceType, undefined, name).catch(() => undefined);
  }
  await store.close();
}, 120_000);

const DeploymentListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.object({
        replicas: z.number(),
        template: z.object({ spec: z.object({ serviceAccountName: z.string() }) }),
      }),
      status: z.object({ readyReplicas: z.number().optional() }).optional(),
    }),
  ),
});

async function deployments(): Promise<Record<string, { replicas: number; ready: number; account: string }>> {
  const list = DeploymentListSchema.parse(
    JSON.parse(await kubectl(['get', 'deployments', '-n', namespace, '-o', 'json'])),
  );
  return Object.fromEntries(
    list.items.map((d) => [
      d.metadata.name,
      {
        replicas: d.spec.replicas,
        ready: d.status?.readyReplicas ?? 0,
        account: d.spec.template.spec.serviceAccountName,
      },
    ]),
  );
}

/** Asks the authorizer, answering `question: allowed|denied` lines so a failure names each one. */
async function answers(account: string, table: readonly [AccessQuestion, boolean][]): Promise<string[]> {
  const allowed = await mayDo(
    `system:serviceaccount:${namespace}:${account}`,
    table.map(([question]) => question),
  );
  return table.map(([question], i) => `${describeQuestion(question)}: ${allowed[i] ? 'allowed' : 'denied'}`);
}
const expected = (table: readonly [AccessQuestion, boolean][]): string[] =>
  table.map(([question, allow]) => `${describeQuestion(question)}: ${allow ? 'allowed' : 'denied'}`);

const agentry = { group: 'agentry.dev' };

describe('helm install', () => {
  it('creates the API (3 replicas), operator (2 replicas) and egress proxy (2 replicas) Deployments with their own service accounts, all Ready', async () => {
    expect(await deployments()).toEqual({
      [apiAccount]: { replicas: 3, ready: 3, account: apiAccount },
      [operatorAccount]: { replicas: 2, ready: 2, account: operatorAccount },
      [egressAccount]: { replicas: 2, ready: 2, account: egressAccount },
    });
  });

  it('creates a PodDisruptionBudget, a Service and a NetworkPolicy for each program', async () => {
    const names = (await kubectl(['get', 'pdb,service,networkpolicy', '-n', namespace, '-o', 'name']))
      .trim()
      .split('\n')
      .sort();
    expect(names).toEqual(
      [
        `networkpolicy.networking.k8s.io/${apiAccount}`,
        `networkpolicy.networking.k8s.io/${operatorAccount}`,
        `networkpolicy.networking.k8s.io/${egressAccount}`,
        `poddisruptionbudget.policy/${apiAccount}`,
        `poddisruptionbudget.policy/${operatorAccount}`,
        `poddisruptionbudget.policy/${egressAccount}`,
        `service/${apiAccount}`,
        `service/${operatorAccount}-metrics`,
        `service/${egressAccount}`,
      ].sort(),
    );
  });

  it('creates the organizations named in values', async () => {
    const created = await store.get(OrganizationType, undefined, org);
    expect(created?.spec.plan).toBe('pro');
  });

  it("lets the API account read what it serves, its own Secrets and the executors' keys, create Secrets elsewhere, record model usage, and nothing more", async () => {
    const table: [AccessQuestion, boolean][] = [
      [{ verb: 'list', resource: 'tasks', ...agentry }, true],
      [{ verb: 'watch', resource: 'organizations', ...agentry }, true],
      [{ verb: 'create', resource: 'tasks', namespace: orgNamespace, ...agentry }, true],
      [{ verb: 'delete', resource: 'agentcomputers', namespace: orgNamespace, ...agentry }, true],
      [{ verb: 'list', resource: 'secrets', namespace }, true],
      [{ verb: 'create', resource: 'secrets', namespace }, true],
      [{ verb: 'create', resource: 'secrets', namespace: orgNamespace }, true],
      [{ verb: 'get', resource: 'secrets', namespace: orgNamespace, name: 'context-lake-credentials' }, true],
      // The model gateway reads the executors' provider keys by name, and no other Secret there.
      [{ verb: 'get', resource: 'secrets', namespace: orgNamespace, name: 'agentry-executor-claude' }, true],
      [{ verb: 'get', resource: 'secrets', namespace: orgNamespace, name: 'task-env-anything' }, false],
      [{ verb: 'list', resource: 'secrets', namespace: orgNamespace }, false],
      [{ verb: 'delete', resource: 'secrets', namespace: orgNamespace }, false],
      [{ verb: 'get', resource: 'secrets', namespace: otherNamespace, name: 'anything' }, false],
      [{ verb: 'list', resource: 'secrets' }, false],
      // The model gateway records usage in Task and Organization status.
      [
        { verb: 'update', resource: 'tasks', subresource: 'status', namespace: orgNamespace, ...agentry },
        true,
      ],
      [{ verb: 'update', resource: 'organizations', subresource: 'status', ...agentry }, true],
      [
        {
          verb: 'update',
          resource: 'agentcomputers',
          subresource: 'status',
          namespace: orgNamespace,
          ...agentry,
        },
        false,
      ],
      [{ verb: 'delete', resource: 'tasks', namespace: orgNamespace, ...agentry }, false],
      [{ verb: 'create', resource: 'organizations', ...agentry }, false],
      [{ verb: 'delete', resource: 'pods', namespace: orgNamespace }, false],
      [{ verb: 'create', resource: 'pods', namespace: orgNamespace }, false],
      [{ verb: 'get', resource: 'nodes' }, false],
    ];
    expect(await answers(apiAccount, table)).toEqual(expected(table));
  });

  it('lets the egress proxy account read tasks, organizations and workspaces, record denials on task status and as Events, and read the installation key, nothing more', async () => {
    const table: [AccessQuestion, boolean][] = [
      [{ verb: 'watch', resource: 'tasks', ...agentry }, true],
      [{ verb: 'list', resource: 'organizations', ...agentry }, true],
      [{ verb: 'get', resource: 'agentcomputers', namespace: orgNamespace, ...agentry }, true],
      [
        { verb: 'update', resource: 'tasks', subresource: 'status', namespace: orgNamespace, ...agentry },
        true,
      ],
      [{ verb: 'create', resource: 'events', namespace: orgNamespace }, true],
      [{ verb: 'get', resource: 'secrets', namespace, name: 'agentry-installation-key' }, true],
      [{ verb: 'get', resource: 'secrets', namespace, name: 'anything-else' }, false],
      [{ verb: 'get', resource: 'secrets', namespace: orgNamespace, name: 'agentry-executor-claude' }, false],
      [{ verb: 'list', resource: 'secrets', namespace }, false],
      [{ verb: 'update', resource: 'tasks', namespace: orgNamespace, ...agentry }, false],
      [{ verb: 'update', resource: 'organizations', subresource: 'status', ...agentry }, false],
      [{ verb: 'create', resource: 'pods', namespace: orgNamespace }, false],
    ];
    expect(await answers(egressAccount, table)).toEqual(expected(table));
  });

  it("lets the operator account manage workloads and status in organization namespaces, and its Lease, but not the cluster's own objects", async () => {
    const table: [AccessQuestion, boolean][] = [
      [{ verb: 'create', resource: 'pods', namespace: orgNamespace }, true],
      [{ verb: 'create', resource: 'virtualmachines', group: 'kubevirt.io', namespace: orgNamespace }, true],
      [{ verb: 'create', resource: 'persistentvolumeclaims', namespace: orgNamespace }, true],
      [
        { verb: 'create', resource: 'networkpolicies', group: 'networking.k8s.io', namespace: orgNamespace },
        true,
      ],
      [
        { verb: 'update', resource: 'tasks', subresource: 'status', namespace: orgNamespace, ...agentry },
        true,
      ],
      [
        {
          verb: 'update',
          resource: 'agentcomputers',
          subresource: 'status',
          namespace: orgNamespace,
          ...agentry,
        },
        true,
      ],
      [{ verb: 'update', resource: 'organizations', subresource: 'status', ...agentry }, true],
      [{ verb: 'create', resource: 'events', namespace: orgNamespace }, true],
      [{ verb: 'create', resource: 'namespaces' }, true],
      [{ verb: 'create', resource: 'leases', group: 'coordination.k8s.io', namespace }, true],
      [
        {
          verb: 'update',
          resource: 'leases',
          group: 'coordination.k8s.io',
          namespace,
          name: 'agentry-operator',
        },
        true,
      ],
      [{ verb: 'update', resource: 'leases', group: 'coordination.k8s.io', namespace, name: 'other' }, false],
      [
        { verb: 'create', resource: 'leases', group: 'coordination.k8s.io', namespace: otherNamespace },
        false,
      ],
      [{ verb: 'create', resource: 'tasks', namespace: orgNamespace, ...agentry }, false],
      [{ verb: 'update', resource: 'organizations', ...agentry }, false],
      [{ verb: 'delete', resource: 'namespaces' }, false],
      [{ verb: 'get', resource: 'nodes' }, false],
      [{ verb: 'update', resource: 'customresourcedefinitions', group: 'apiextensions.k8s.io' }, false],
      [{ verb: 'create', resource: 'clusterrolebindings', group: 'rbac.authorization.k8s.io' }, false],
      [{ verb: 'create', resource: 'pods', subresource: 'exec', namespace: orgNamespace }, false],
    ];
    expect(await answers(operatorAccount, table)).toEqual(expected(table));
  });

  it('NOTES.txt tells how to get the first API key from an API pod, for the bootstrapped organization', () => {
    expect(notes).toContain(`kubectl -n ${namespace} exec deploy/${apiAccount} -- \\`);
    expect(notes).toContain(`agentry keys create --org ${org} --user admin`);
  });

  it("`agentry keys create` (NOTES.txt) works with the API account's own token, and the real API server then accepts the key", async () => {
    const kubeconfig = await accountKubeconfig(namespace, apiAccount);
    const created = await runAgentry(
      ['keys', 'create', '--org', org, '--user', 'admin', '--kubeconfig', kubeconfig],
      { AGENTRY_NAMESPACE: namespace },
    );
    expect(created.stderr).toMatch(/created key/);
    apiKey = created.stdout.trim();
    // `agentry api` as the API account: its informers must be allowed to fill before /readyz is 200.
    const port = await freeLoopbackPort();
    startAgentry(['api'], {
      AGENTRY_STORE: 'kubernetes',
      KUBECONFIG: kubeconfig,
      AGENTRY_NAMESPACE: namespace,
      AGENTRY_PORT: String(port),
      AGENTRY_LOG_LEVEL: 'warn',
    });
    apiUrl = `http://127.0.0.1:${port}`;
    await eventually('api ready', () => statusIs(`${apiUrl}/readyz`, 200), 60_000);
    const res = await fetch(`${apiUrl}/v1/agent-computers`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
  }, 120_000);

  it("`agentry operator` with the operator account's own token takes its Lease and gives the organization its namespace", async () => {
    const kubeconfig = await accountKubeconfig(namespace, operatorAccount);
    startAgentry(['operator'], {
      AGENTRY_STORE: 'kubernetes',
      KUBECONFIG: kubeconfig,
      AGENTRY_NAMESPACE: namespace,
      AGENTRY_METRICS_PORT: String(await freeLoopbackPort()),
      AGENTRY_LOG_LEVEL: 'warn',
    });
    const created = await eventually(
      'organization namespace',
      () => store.get(NamespaceType, undefined, orgNamespace),
      90_000,
    );
    expect(created.metadata.labels).toMatchObject({ 'agentry.dev/organization': org });
    const ready = await eventually('organization Ready', async () => {
      const current = await store.get(OrganizationType, undefined, org);
      return current?.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    });
    expect(ready.reason).toBe('NamespaceReady');
  }, 120_000);

  it("the API account may store a context lake's credentials in the organization's namespace (create, then update by name), and the operator account reconciles the lake", async () => {
    const post = async (name: string): Promise<number> => {
      const res = await fetch(`${apiUrl}/v1/context-lake/datasets`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          name,
          from: `s3://helm-test/${name}/`,
          params: {
            file_format: 'parquet',
            s3_auth: 'key',
            s3_key: `AKIA${name}`,
            s3_secret: `secret-${name}`,
          },
        }),
      });
      return res.status;
    };
    // The first dataset creates the Secret, the second rewrites it: both through the API's own account.
    expect(await post('first')).toBe(201);
    expect(await post('second')).toBe(201);
    const secret = await store.get(SecretType, orgNamespace, 'context-lake-credentials');
    expect(Object.keys(secret?.data ?? {}).length).toBe(4);
    // The operator (still running as its own account) takes the new lake in: finalizer and status.
    const lake = await eventually(
      'context lake status',
      async () => {
        const current = await store.get(ContextLakeType, orgNamespace, 'context-lake');
        return current?.status?.vmStatus === undefined ? undefined : current;
      },
      60_000,
    );
    expect(lake.status?.vmStatus).toBe('not_provisioned');
  }, 120_000);

  it('helm uninstall removes the Deployments and RBAC, and keeps the CRDs and the Organization', async () => {
    // The lake carries the operator's finalizer: release it while the operator still runs.
    await store.delete(ContextLakeType, orgNamespace, 'context-lake').catch(() => undefined);
    await eventually('context lake gone', async () =>
      (await store.get(ContextLakeType, orgNamespace, 'context-lake')) === undefined ? true : undefined,
    );
    await stopAll();
    await helm(['uninstall', release, '--namespace', namespace, '--wait']);
    uninstalled = true;
    expect(await deployments()).toEqual({});
    await expect(kubectl(['get', 'clusterrole', apiAccount])).rejects.toThrow(/NotFound|not found/);
    const crds = await kubectl(['get', 'crd', '-o', 'name']);
    for (const plural of ['organizations', 'agentcomputers', 'tasks', 'webhooks', 'contextlakes']) {
      expect(crds).toContain(`customresourcedefinition.apiextensions.k8s.io/${plural}.agentry.dev`);
    }
    expect(await store.get(OrganizationType, undefined, org)).toBeDefined();
  }, 120_000);
});

async function statusIs(url: string, status: number): Promise<true | undefined> {
  const res = await fetch(url).catch(() => undefined);
  return res?.status === status ? true : undefined;
}
