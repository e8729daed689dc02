import { describe, expect, it } from '@jest/globals';
import { ContextLakeSpecSchema, secretData } from '../../crds/index.js';
import type { ContextLake, ContextLakeStatus, Secret, VmStatus } from '../../crds/index.js';
import { redactSecrets, resolveLakeConfig } from '../../operator/context-lake/resolve-config.js';
import { computeLakeStatus, mergeLakeStatus } from '../../operator/context-lake/status.js';
import type { LakePass } from '../../operator/context-lake/status.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');

const lakeOf = (mode: 'Running' | 'Hibernated', status?: ContextLakeStatus, generation = 2): ContextLake => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: 'context-lake', namespace: 'org', generation, uid: 'u1' },
  spec: ContextLakeSpecSchema.parse({
    operatingMode: mode,
    config: {
      name: 'p',
      datasets: [
        { name: 'a', from: 's3://b/a.parquet', notifications: true },
        { name: 'f', from: 'file:///data/f.csv' },
      ],
    },
  }),
  ...(status === undefined ? {} : { status }),
});

const up = (ready: boolean, extra: Partial<WorkloadObservation> = {}): WorkloadObservation => ({
  provisioned: true,
  running: true,
  ready,
  endpoint: 'http://127.0.0.1:9',
  reason: ready ? 'LakeReady' : 'Starting',
  message: ready ? 'ready' : 'starting',
  ...extra,
});

const answered = (
  generation: number | null,
  states: Record<string, LakeStatus['datasets'][string]>,
): LakeStatus => ({
  generation,
  loading: false,
  datasets: states,
  views: {},
  lastQueryAt: '2026-03-01T11:59:00.000Z',
});

const pass = (overrides: Partial<LakePass>): LakePass => ({
  notProvisioned: false,
  workload: undefined,
  secretValues: [],
  ...overrides,
});

const readyLoaded = answered(2, {
  a: { status: 'ready' },
  f: { status: 'error', error: 'boom key-AKIA1234' },
});

// Numbered cases: intent × what the pass saw → vmStatus, Ready (status/reason), dataset a's status.
const cases: [number, ContextLake, LakePass, VmStatus, string, string][] = [
  [1, lakeOf('Hibernated'), pass({ notProvisioned: true }), 'not_provisioned', 'False/Paused', 'unknown'],
  [
    2,
    lakeOf('Hibernated'),
    pass({ workload: up(false, { running: false }) }),
    'paused',
    'False/Paused',
    'unknown',
  ],
  [3, lakeOf('Running'), pass({ workload: up(false) }), 'provisioning', 'False/Starting', 'pending'],
  [4, lakeOf('Running'), pass({ failure: 'cannot create pod' }), 'error', 'False/Failed', 'unknown'],
  [
    5,
    lakeOf('Running'),
    pass({ workload: up(false, { provisionError: 'ErrImagePull' }) }),
    'error',
    'False/Failed',
    'unknown',
  ],
  [
    6,
    lakeOf('Running'),
    pass({ workload: up(true), lakeProblem: 'refused' }),
    'provisioning',
    'False/Starting',
    'pending',
  ],
  [
    7,
    lakeOf('Running'),
    pass({ workload: up(true), lake: answered(1, { a: { status: 'ready' } }) }),
    'running',
    'False/Loading',
    'ready',
  ],
  [
    8,
    lakeOf('Running'),
    pass({ workload: up(true), lake: answered(2, { a: { status: 'loading' }, f: { status: 'ready' } }) }),
    'running',
    'False/Loading',
    'loading',
  ],
  [9, lakeOf('Running'), pass({ workload: up(true), lake: readyLoaded }), 'running', 'True/Loaded', 'ready'],
  [
    10,
    lakeOf('Running'),
    pass({ workload: up(true), lake: readyLoaded, configProblem: 'no key s3_key' }),
    'running',
    'False/ConfigInvalid',
    'ready',
  ],
];

describe('computeLakeStatus', () => {
  it.each(cases)('case %i', (_n, lake, seen, vmStatus, ready, datasetA) => {
    const owned = computeLakeStatus(lake, seen, NOW);
    expect(owned.vmStatus).toBe(vmStatus);
    const condition = owned.conditions.find((c) => c.type === 'Ready');
    expect(`${condition?.status ?? ''}/${condition?.reason ?? ''}`).toBe(ready);
    expect(owned.datasets.a?.status).toBe(datasetA);
    expect(owned.datasets.a).toMatchObject({ connectorId: 's3', notifications: true });
  });

  it('takes the connector from the scheme of `from`', () => {
    const owned = computeLakeStatus(lakeOf('Running'), pass({ workload: up(true), lake: readyLoaded }), NOW);
    expect(owned.datasets.f).toMatchObject({ connectorId: 'file', ok: false, status: 'error' });
  });

  it('redacts credential values from a dataset error the lake reported', () => {
    const seen = pass({ workload: up(true), lake: readyLoaded, secretValues: ['key-AKIA1234'] });
    expect(computeLakeStatus(lakeOf('Running'), seen, NOW).datasets.f?.error).toBe('boom [redacted]');
  });

  it("counts the lake's last query and becoming ready as activity", () => {
    const first = computeLakeStatus(lakeOf('Running'), pass({ workload: up(true), lake: readyLoaded }), NOW);
    expect(first.lastActivityAt).toBe(NOW.toISOString());
    const later = lakeOf('Running', { lastActivityAt: '2026-03-01T10:00:00.000Z', conditions: [] });
    const already = {
      ...later,
      status: { ...later.status, conditions: mergeLakeStatus(undefined, first, NOW).conditions },
    };
    expect(
      computeLakeStatus(already, pass({ workload: up(true), lake: readyLoaded }), NOW).lastActivityAt,
    ).toBe('2026-03-01T11:59:00.000Z');
  });
});

describe('mergeLakeStatus', () => {
  const owned = computeLakeStatus(lakeOf('Running'), pass({ workload: up(true), lake: readyLoaded }), NOW);

  it('keeps the S3 counters, notifications and NotificationsReady that other writers own', () => {
    const base: ContextLakeStatus = {
      notifications: { queueUrl: 'q', queueArn: 'arn', region: 'us-east-1' },
      datasets: {
        a: {
          ok: false,
          status: 'unknown',
          connectorId: 's3',
          notifications: true,
          s3EventCount: 4,
          s3LastEventAt: '2026-03-01T11:00:00.000Z',
        },
        gone: { ok: true, status: 'ready', connectorId: 's3', notifications: false, s3EventCount: 1 },
      },
      conditions: [
        {
          type: 'NotificationsReady',
          status: 'True',
          reason: 'QueueReady',
          message: '',
          lastTransitionTime: '2026-03-01T00:00:00Z',
        },
      ],
    };
    const merged = mergeLakeStatus(base, owned, NOW);
    expect(merged.notifications).toEqual(base.notifications);
    expect(merged.datasets?.a).toMatchObject({
      status: 'ready',
      s3EventCount: 4,
      s3LastEventAt: '2026-03-01T11:00:00.000Z',
    });
    expect(merged.datasets?.gone).toBeUndefined();
    expect(merged.conditions?.map((c) => c.type)).toEqual(['NotificationsReady', 'Provisioned', 'Ready']);
    expect(merged.observedGeneration).toBe(2);
  });
});

describe('resolveLakeConfig', () => {
  const secret = (values: Record<string, string>): Secret => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'context-lake-credentials', namespace: 'org' },
    data: secretData(values),
  });
  const config = ContextLakeSpecSchema.parse({
    config: {
      name: 'p',
      datasets: [
        {
          name: 'a',
          from: 's3://b/a.parquet',
          params: { s3_auth: 'key', s3_key: '${secrets:k}', s3_secret: '${secrets:s}' },
        },
      ],
    },
  }).config;

  it('replaces each reference by its value and leaves literals alone', () => {
    const resolved = resolveLakeConfig(config, secret({ k: 'AKIA', s: 'shh-secret' }));
    expect(resolved.ok && resolved.config.datasets[0]?.params).toEqual({
      s3_auth: 'key',
      s3_key: 'AKIA',
      s3_secret: 'shh-secret',
    });
  });

  it('names the missing keys, never a value', () => {
    expect(resolveLakeConfig(config, secret({ k: 'AKIA' }))).toEqual({ ok: false, missingKeys: ['s'] });
    expect(resolveLakeConfig(config, undefined)).toEqual({ ok: false, missingKeys: ['k', 's'] });
  });

  it('changes its digest when a value changes, so a rotated credential is pushed again', () => {
    const one = resolveLakeConfig(config, secret({ k: 'AKIA', s: 'one-secret' }));
    const two = resolveLakeConfig(config, secret({ k: 'AKIA', s: 'two-secret' }));
    expect(one.ok && two.ok && one.digest !== two.digest).toBe(true);
  });

  it('redacts every occurrence of a value', () => {
    expect(redactSecrets('a shh-secret b shh-secret', ['shh-secret'])).toBe('a [redacted] b [redacted]');
  });
});
