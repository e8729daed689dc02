import { describe, expect, it } from '@jest/globals';
import { CONTEXT_LAKE_NAME } from '../../crds/context-lake/types.js';
import type { ContextLake, ContextLakeStatus, Dataset } from '../../crds/context-lake/types.js';
import type { OperatingMode } from '../../crds/index.js';
import {
  refreshEndpointOf,
  statusWithQueue,
  wantsNotifications,
} from '../../operator/context-lake/notifications/lake-counters.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const QUEUE = {
  queueUrl: 'http://127.0.0.1:5000/123456789012/agentry-lake-agentry-org-acme',
  queueArn: 'arn:aws:sqs:us-east-1:123456789012:agentry-lake-agentry-org-acme',
  region: 'us-east-1',
};

const dataset = (name: string, notifications: boolean): Dataset => ({
  name,
  from: `s3://lake-data/${name}/`,
  notifications,
  params: { file_format: 'csv' },
});

function lake(
  options: {
    datasets?: Dataset[];
    mode?: OperatingMode;
    status?: ContextLakeStatus;
    deleting?: boolean;
  } = {},
): ContextLake {
  return {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'ContextLake',
    metadata: {
      name: CONTEXT_LAKE_NAME,
      namespace: 'agentry-org-acme',
      generation: 3,
      ...(options.deleting === true ? { deletionTimestamp: '2026-11-22T11:00:00Z' } : {}),
    },
    spec: {
      config: { version: 'v1', kind: 'Spicepod', name: 'lake', datasets: options.datasets ?? [], views: [] },
      operatingMode: options.mode ?? 'Running',
      idleTimeout: '15m',
    },
    ...(options.status === undefined ? {} : { status: options.status }),
  };
}

const ready = (status: 'True' | 'False') => ({
  type: 'Ready',
  status,
  reason: status === 'True' ? 'Loaded' : 'Starting',
  message: '',
  lastTransitionTime: '2026-11-22T10:00:00Z',
});

describe('wantsNotifications', () => {
  it.each([
    ['one dataset with notifications', lake({ datasets: [dataset('a', false), dataset('b', true)] }), true],
    ['no dataset with notifications', lake({ datasets: [dataset('a', false)] }), false],
    ['no datasets at all', lake(), false],
    ['a lake being deleted', lake({ datasets: [dataset('b', true)], deleting: true }), false],
  ])('%s: %s', (_what, input, expected) => {
    expect(wantsNotifications(input)).toBe(expected);
  });
});

describe('refreshEndpointOf', () => {
  const endpoint = 'http://127.0.0.1:8710';
  it.each([
    ['a running, ready lake', lake({ status: { endpoint, conditions: [ready('True')] } }), endpoint],
    [
      'a hibernated lake (it loads everything on its next start)',
      lake({ mode: 'Hibernated', status: { endpoint, conditions: [ready('True')] } }),
      undefined,
    ],
    ['a starting lake', lake({ status: { endpoint, conditions: [ready('False')] } }), undefined],
    ['a lake without Ready', lake({ status: { endpoint } }), undefined],
    ['a ready lake without an endpoint', lake({ status: { conditions: [ready('True')] } }), undefined],
  ])('%s', (_what, input, expected) => {
    expect(refreshEndpointOf(input)).toBe(expected);
  });
});

describe('statusWithQueue', () => {
  const before: ContextLakeStatus = {
    vmStatus: 'running',
    endpoint: 'http://127.0.0.1:8710',
    datasets: { a: { ok: true, status: 'ready', connectorId: 's3', notifications: true, s3EventCount: 4 } },
    conditions: [ready('True')],
  };

  it('records the queue and NotificationsReady True, keeping every other field', () => {
    const after = statusWithQueue(lake({ status: before }), { queue: QUEUE }, NOW);
    expect(after).toEqual({
      ...before,
      notifications: QUEUE,
      conditions: [
        {
          type: 'NotificationsReady',
          status: 'True',
          reason: 'QueueReady',
          message: `bucket events arrive through ${QUEUE.queueArn}`,
          lastTransitionTime: '2026-11-22T12:00:00Z',
          observedGeneration: 3,
        },
        ready('True'),
      ],
    });
  });

  it('records a failure as NotificationsReady False with its message, keeping the last known queue', () => {
    const withQueue = statusWithQueue(lake({ status: before }), { queue: QUEUE }, NOW);
    const after = statusWithQueue(lake({ status: withQueue }), { error: 'SQS is unreachable' }, NOW);
    expect(after.notifications).toEqual(QUEUE);
    expect(after.conditions?.find((c) => c.type === 'NotificationsReady')).toMatchObject({
      status: 'False',
      reason: 'QueueFailed',
      message: 'SQS is unreachable',
    });
  });
});
