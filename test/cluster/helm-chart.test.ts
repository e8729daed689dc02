// The Helm chart rendered by the real helm (built from the Go module proxy by the harness): lint and
// template pass for the default values and each profile, what they render holds the settings the
// programs need, and values.schema.json turns bad values away at install time with a readable message.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { loadConfig } from '../../platform/config.js';
import type { Config } from '../../platform/config.js';
import { DEFAULT_EGRESS_ALLOW } from '../../platform/egress-defaults.js';
import { EGRESS_PROXY_APP } from '../../operator/runtimes/network-policy.js';
import { CHART, PROFILES, helm, helmFailure, profileValues, renderedObjects } from './helm-support.js';
import type { Rendered } from './helm-support.js';

const PodSpecSchema = z.looseObject({
  serviceAccountName: z.string(),
  securityContext: z.looseObject({ runAsNonRoot: z.literal(true) }),
  containers: z.array(
    z.looseObject({
      args: z.array(z.string()),
      env: z.array(z.looseObject({ name: z.string(), value: z.string().optional() })),
      securityContext: z.looseObject({
        readOnlyRootFilesystem: z.literal(true),
        allowPrivilegeEscalation: z.literal(false),
        capabilities: z.object({ drop: z.array(z.string()) }),
      }),
      readinessProbe: z.looseObject({}),
      livenessProbe: z.looseObject({}),
    }),
  ),
});
const DeploymentSchema = z.looseObject({
  spec: z.looseObject({ template: z.looseObject({ spec: PodSpecSchema }) }),
});

function deployment(objects: Rendered[], name: string) {
  const found = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (found === undefined)
    throw new Error(`no Deployment ${name} in ${objects.map((o) => o.kind).join(',')}`);
  const pod = DeploymentSchema.parse(found).spec.template.spec;
  const [container] = pod.containers;
  if (container === undefined) throw new Error(`Deployment ${name} has no container`);
  const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? '(from a reference)']));
  return { pod, container, env };
}

/** The configuration a Deployment's program parses from its environment. */
function configOf(objects: Rendered[], name: string): Config {
  // Values from references (the pod's namespace, Secrets) are stood in for by a plain word.
  const env = Object.fromEntries(
    Object.entries(deployment(objects, name).env).map(([key, value]) => [
      key,
      value === '(from a reference)' ? 'agentry-system' : value,
    ]),
  );
  return loadConfig(env);
}

const cases: [string, string[]][] = [
  ['default values', []],
  ...PROFILES.map((profile): [string, string[]] => [
    `the ${profile} profile`,
    ['-f', profileValues(profile)],
  ]),
];

describe('helm chart', () => {
  it.each(cases)('helm lint passes with %s', async (_name, values) => {
    await expect(helm(['lint', CHART, ...values])).resolves.toMatch(
      /1 chart\(s\) linted, 0 chart\(s\) failed/,
    );
  });

  it.each(cases)(
    'helm template with %s renders an API and an operator Deployment, non-root with read-only roots',
    async (_name, values) => {
      const objects = renderedObjects(
        await helm(['template', 'agentry', CHART, '--namespace', 'agentry-system', ...values]),
      );
      const api = deployment(objects, 'agentry-api');
      const operator = deployment(objects, 'agentry-operator');
      const egress = deployment(objects, 'agentry-egress');
      expect(egress.container.args).toEqual(['egress-proxy']);
      expect(egress.pod.serviceAccountName).toBe('agentry-egress');
      expect(api.container.args).toEqual(['api']);
      expect(operator.container.args).toEqual(['operator']);
      expect(api.pod.serviceAccountName).toBe('agentry-api');
      expect(operator.pod.serviceAccountName).toBe('agentry-operator');
      for (const env of [api.env, operator.env]) {
        expect(env).toMatchObject({ AGENTRY_STORE: 'kubernetes', AGENTRY_HOST: '0.0.0.0' });
      }
      expect(operator.env.AGENTRY_LEADER_ELECTION).toBe('true');
      for (const kind of ['ServiceAccount', 'ClusterRole', 'Role', 'Service', 'NetworkPolicy']) {
        expect(objects.filter((o) => o.kind === kind).length).toBeGreaterThanOrEqual(1);
      }
    },
  );

  it.each(cases)(
    'with %s, the environment both programs get is a valid configuration (platform/config.ts parses it)',
    async (_name, values) => {
      const objects = renderedObjects(await helm(['template', 'agentry', CHART, ...values]));
      for (const name of ['agentry-api', 'agentry-operator', 'agentry-egress'])
        expect(configOf(objects, name).AGENTRY_STORE).toBe('kubernetes');
    },
  );

  it('the kubevirt profile makes kubevirt the default runtime and lets the operator manage VirtualMachines', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '-f', profileValues('kubevirt')]),
    );
    expect(deployment(objects, 'agentry-operator').env.AGENTRY_DEFAULT_RUNTIME).toBe('kubevirt');
    expect(
      JSON.stringify(objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'agentry-operator')),
    ).toContain('virtualmachines');
  });

  it("workspacePool.default becomes the operator's AGENTRY_DEFAULT_WORKSPACE_POOL, which it parses; null renders none", async () => {
    const spec = { minReady: 2, maxReady: 5, template: { runtime: 'pod' } };
    const withPool = renderedObjects(
      await helm([
        'template',
        'agentry',
        CHART,
        '--set-json',
        `workspacePool.default=${JSON.stringify(spec)}`,
      ]),
    );
    const operator = deployment(withPool, 'agentry-operator');
    const setting = operator.env.AGENTRY_DEFAULT_WORKSPACE_POOL;
    expect(
      loadConfig({ AGENTRY_DEFAULT_WORKSPACE_POOL: setting }).AGENTRY_DEFAULT_WORKSPACE_POOL,
    ).toMatchObject(spec);
    expect(deployment(withPool, 'agentry-api').env.AGENTRY_DEFAULT_WORKSPACE_POOL).toBeUndefined();
    const without = renderedObjects(await helm(['template', 'agentry', CHART]));
    expect(deployment(without, 'agentry-operator').env.AGENTRY_DEFAULT_WORKSPACE_POOL).toBeUndefined();
  });

  it('modelGateway points the operator at the API Service and gives the API its upstreams and price table', async () => {
    const objects = renderedObjects(
      await helm([
        'template',
        'agentry',
        CHART,
        '--namespace',
        'agentry-system',
        '--set-json',
        'modelGateway.upstreams={"openai":"https://openai.internal.example"}',
        '--set-json',
        'modelGateway.prices=[{"model":"claude-sonnet-4-5","inputPerMTok":3}]',
      ]),
    );
    const operatorConfig = configOf(objects, 'agentry-operator');
    expect(operatorConfig.AGENTRY_INTERNAL_URL).toBe('http://agentry-api.agentry-system.svc:8080');
    expect(operatorConfig.AGENTRY_MODEL_GATEWAY).toBe('enabled');
    const apiConfig = configOf(objects, 'agentry-api');
    expect(apiConfig.AGENTRY_MODEL_UPSTREAMS).toEqual({ openai: 'https://openai.internal.example' });
    expect(apiConfig.AGENTRY_MODEL_PRICES_FILE).toBe('/etc/agentry/model-prices/prices.yaml');
    const prices = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'agentry-model-prices');
    expect(JSON.stringify(prices)).toContain('claude-sonnet-4-5');
  });

  it('modelGateway.enabled false turns the gateway off for both programs, and renders no price table', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '--set', 'modelGateway.enabled=false']),
    );
    for (const name of ['agentry-api', 'agentry-operator'])
      expect(deployment(objects, name).env.AGENTRY_MODEL_GATEWAY).toBe('disabled');
    expect(deployment(objects, 'agentry-api').env.AGENTRY_MODEL_PRICES_FILE).toBeUndefined();
    expect(objects.some((o) => o.metadata.name === 'agentry-model-prices')).toBe(false);
  });

  it('the egress proxy runs 2 replicas with the default allow list, and the operator points workspaces at its Service', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '--namespace', 'agentry-system']),
    );
    const egress = deployment(objects, 'agentry-egress');
    expect(loadConfig(egress.env).AGENTRY_EGRESS_ALLOW).toEqual(DEFAULT_EGRESS_ALLOW);
    expect(egress.env.AGENTRY_EGRESS_PRIVATE_TARGETS).toBe('false');
    const rendered = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'agentry-egress');
    expect(rendered).toMatchObject({
      spec: {
        replicas: 2,
        template: { metadata: { labels: { 'app.kubernetes.io/name': EGRESS_PROXY_APP } } },
      },
    });
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'agentry-egress');
    expect(JSON.stringify(service)).toContain('"port":3128');
    expect(deployment(objects, 'agentry-operator').env.AGENTRY_EGRESS_PROXY_URL).toBe(
      'http://agentry-egress.agentry-system.svc:3128',
    );
    expect(deployment(objects, 'agentry-api').env.AGENTRY_EGRESS_PROXY_URL).toBeUndefined();
  });

  it('the egress proxy may read tasks, organizations and workspaces and write only task status and events', async () => {
    const objects = renderedObjects(await helm(['template', 'agentry', CHART]));
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'agentry-egress');
    expect(role).toMatchObject({
      rules: [
        { resources: ['organizations', 'agentcomputers', 'tasks'], verbs: ['get', 'list', 'watch'] },
        { resources: ['tasks/status'], verbs: ['update', 'patch'] },
        { resources: ['events'], verbs: ['create'] },
      ],
    });
  });

  it('workloads.dnsServers becomes AGENTRY_WORKLOAD_DNS_SERVERS of the operator, which it parses', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '--set', 'workloads.dnsServers={169.254.20.10/32}']),
    );
    const setting = deployment(objects, 'agentry-operator').env.AGENTRY_WORKLOAD_DNS_SERVERS;
    expect(loadConfig({ AGENTRY_WORKLOAD_DNS_SERVERS: setting }).AGENTRY_WORKLOAD_DNS_SERVERS).toEqual([
      '169.254.20.10/32',
    ]);
  });

  it('egress.enabled=false renders no proxy and leaves the operator without a proxy URL', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '--set', 'egress.enabled=false']),
    );
    expect(objects.filter((o) => o.metadata.name === 'agentry-egress')).toEqual([]);
    expect(deployment(objects, 'agentry-operator').env.AGENTRY_EGRESS_PROXY_URL).toBeUndefined();
  });

  it('the pod profile grants nothing on kubevirt.io', async () => {
    const objects = renderedObjects(await helm(['template', 'agentry', CHART, '-f', profileValues('pod')]));
    expect(JSON.stringify(objects.filter((o) => o.kind === 'ClusterRole'))).not.toContain('kubevirt.io');
  });

  it('an Ingress with TLS becomes the public URL both programs put in links', async () => {
    const objects = renderedObjects(
      await helm([
        'template',
        'agentry',
        CHART,
        '--set',
        'api.ingress.enabled=true',
        '--set',
        'api.ingress.hosts[0].host=agentry.example.com',
        '--set',
        'api.ingress.tls[0].secretName=agentry-tls',
      ]),
    );
    expect(objects.filter((o) => o.kind === 'Ingress').map((o) => o.metadata.name)).toEqual(['agentry-api']);
    for (const name of ['agentry-api', 'agentry-operator']) {
      expect(deployment(objects, name).env.AGENTRY_PUBLIC_URL).toBe('https://agentry.example.com');
    }
  });

  it.each([
    ['1', []],
    ['2', ['--set', 'api.workers=2']],
    ['auto', ['--set', 'api.workers=auto']],
  ])(
    'api.workers becomes AGENTRY_API_WORKERS=%s of the API, which the API parses',
    async (expected, values) => {
      const objects = renderedObjects(await helm(['template', 'agentry', CHART, ...values]));
      const { env } = deployment(objects, 'agentry-api');
      expect(env.AGENTRY_API_WORKERS).toBe(expected);
      expect(loadConfig({ AGENTRY_API_WORKERS: env.AGENTRY_API_WORKERS }).AGENTRY_API_WORKERS).toBe(
        expected === 'auto' ? 'auto' : Number(expected),
      );
    },
  );

  it('api.previews becomes the preview settings of the API, which the API parses', async () => {
    const plain = deployment(renderedObjects(await helm(['template', 'agentry', CHART])), 'agentry-api').env;
    expect(plain.AGENTRY_PREVIEW_DOMAIN).toBeUndefined();
    expect(plain.AGENTRY_PREVIEW_WAKE_TIMEOUT).toBe('60s');
    const set = ['--set', 'api.previews.domain=preview.example.com', '--set', 'api.previews.wakeTimeout=2m'];
    const { env } = deployment(
      renderedObjects(await helm(['template', 'agentry', CHART, ...set])),
      'agentry-api',
    );
    const config = loadConfig({
      AGENTRY_PREVIEW_DOMAIN: env.AGENTRY_PREVIEW_DOMAIN,
      AGENTRY_PREVIEW_WAKE_TIMEOUT: env.AGENTRY_PREVIEW_WAKE_TIMEOUT,
    });
    expect([config.AGENTRY_PREVIEW_DOMAIN, config.AGENTRY_PREVIEW_WAKE_TIMEOUT]).toEqual([
      'preview.example.com',
      '2m',
    ]);
  });

  it('autoscaling renders an HPA and leaves the API Deployment without a replica count', async () => {
    const objects = renderedObjects(
      await helm(['template', 'agentry', CHART, '--set', 'api.autoscaling.enabled=true']),
    );
    expect(objects.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(true);
    const api = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'agentry-api');
    expect(JSON.stringify(api)).not.toMatch(/"replicas":/);
  });

  it("executor credentials become Secrets in each bootstrapped organization's namespace, which is kept on uninstall", async () => {
    const objects = renderedObjects(
      await helm([
        'template',
        'agentry',
        CHART,
        '--set',
        'organizations[0].name=acme',
        '--set',
        'executors.credentials.claude.apiKey=sk-test',
      ]),
    );
    const namespace = objects.find((o) => o.kind === 'Namespace');
    expect(namespace?.metadata).toMatchObject({
      name: 'agentry-org-acme',
      labels: { 'agentry.dev/organization': 'acme' },
      annotations: { 'helm.sh/resource-policy': 'keep' },
    });
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'agentry-executor-claude');
    expect(secret).toMatchObject({
      metadata: { namespace: 'agentry-org-acme' },
      stringData: { ANTHROPIC_API_KEY: 'sk-test' },
    });
    expect(objects.find((o) => o.kind === 'Organization')?.metadata.name).toBe('acme');
  });

  it('the ServiceMonitor is rendered only when the cluster serves its API', async () => {
    const without = await helm(['template', 'agentry', CHART, '--set', 'serviceMonitor.enabled=true']);
    const withApi = await helm([
      'template',
      'agentry',
      CHART,
      '--set',
      'serviceMonitor.enabled=true',
      '--api-versions',
      'monitoring.coreos.com/v1/ServiceMonitor',
    ]);
    expect(renderedObjects(without).some((o) => o.kind === 'ServiceMonitor')).toBe(false);
    expect(renderedObjects(withApi).some((o) => o.kind === 'ServiceMonitor')).toBe(true);
  });

  it.each([
    ['api.replicas=three', /\/api\/replicas.*got string, want integer/],
    ['runtime.default=process', /\/runtime\/default.*value must be one of 'pod', 'kubevirt'/],
    ['api.replica=3', /\/api.*additional properties 'replica' not allowed/],
    ['workloads.memory=lots', /\/workloads\/memory/],
    ['api.workers=0', /\/api\/workers/],
    ['api.workers=many', /\/api\/workers/],
    ['api.previews.domain=Preview_Host', /\/api\/previews\/domain/],
    ['api.previews.wakeTimeout=soon', /\/api\/previews\/wakeTimeout/],
    ['egress.allow[0].host=GitHub.com', /\/egress\/allow\/0\/host/],
    ['egress.allow[0].ports[0]=70000', /\/egress\/allow\/0\/ports\/0/],
  ])('values.schema.json rejects --set %s, naming the value', async (setting, message) => {
    const failure = await helmFailure(['template', 'agentry', CHART, '--set', setting]);
    expect(failure).toMatch(/values don't meet the specifications of the schema/);
    expect(failure).toMatch(message);
  });

  it.each([
    [
      ['--set', 'runtime.enabled={pod}', '--set', 'runtime.default=kubevirt'],
      /runtime.default "kubevirt" must be one of runtime.enabled/,
    ],
    [
      ['--set', 'objectStore.type=filesystem'],
      /objectStore.type filesystem keeps uploads on one API pod's disk/,
    ],
    [['--set', 'objectStore.s3.bucket='], /objectStore.s3.bucket is required/],
  ])('contradicting values fail with a sentence saying what to change (%j)', async (values, message) => {
    await expect(helmFailure(['template', 'agentry', CHART, ...values])).resolves.toMatch(message);
  });
});
