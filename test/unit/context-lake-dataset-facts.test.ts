import { describe, expect, it } from '@jest/globals';
import { ContextLakeSpecSchema } from '../../crds/index.js';
import type { ContextLake, ContextLakeStatus, DatasetStatus } from '../../crds/index.js';
import { presentStatus } from '../../api/context-lake/present.js';
import { DATA_AS_OF_STEP_MS } from '../../operator/context-lake/dataset-facts.js';
import { computeLakeStatus } from '../../operator/context-lake/status.js';
import type { LakePass } from '../../operator/context-lake/status.js';
import type { LakeDatasetState, LakeStatus } from '../../platform/lake-protocol.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');

const lakeOf = (mode: 'Running' | 'Hibernated', status?: ContextLakeStatus): ContextLake => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: 'context-lake', namespace: 'org', generation: 2, uid: 'u1' },
  spec: ContextLakeSpecSchema.parse({
    operatingMode: mode,
    config: { name: 'p', datasets: [{ name: 'a', from: 's3://b/in/', params: { file_format: 'csv' } }] },
  }),
  ...(status === undefined ? {} : { status }),
});

/** A dataset as the durable lake reports it; its timestamps without milliseconds, as a lake may write them. */
const loaded = (dataAsOf: string, rowCount = 3): LakeDatasetState => ({
  status: 'ready',
  rowCount,
  bytes: 1234,
  loadedAt: '2026-03-01T11:00:00Z',
  dataAsOf,
  sources: { objects: 2, digest: 'd1', newestModified: '2026-03-01T10:59:00Z' },
  lastRefresh: {
    kind: 'incremental',
    trigger: 'event',
    at: '2026-03-01T11:00:00Z',
    fetchedObjects: 1,
    fetchedBytes: 600,
    removedObjects: 0,
    ms: 42,
  },
});

const running = (state: LakeDatasetState): LakePass => {
  const lake: LakeStatus = { generation: 2, loading: false, datasets: { a: state }, views: {} };
  return {
    notProvisioned: false,
    secretValues: [],
    lake,
    workload: {
      provisioned: true,
      running: true,
      ready: true,
      endpoint: 'http://127.0.0.1:9',
      reason: 'LakeReady',
      message: 'ready',
    },
  };
};

function entryOf(lake: ContextLake, pass: LakePass): DatasetStatus {
  const entry = computeLakeStatus(lake, pass, NOW).datasets.a;
  if (entry === undefined) throw new Error('no entry for dataset a');
  return entry;
}

/** The lake with the dataset entry the operator wrote for `state`. */
const storedAfter = (mode: 'Running' | 'Hibernated', state: LakeDatasetState): ContextLake =>
  lakeOf(mode, { datasets: { a: entryOf(lakeOf('Running'), running(state)) } });

describe('dataset facts in ContextLake status', () => {
  it('copies rows, bytes, loadedAt, dataAsOf, source versions and the last refresh, timestamps in the resource format', () => {
    const entry = computeLakeStatus(lakeOf('Running'), running(loaded('2026-03-01T11:30:00Z')), NOW).datasets
      .a;
    expect(entry).toEqual({
      ok: true,
      status: 'ready',
      connectorId: 's3',
      notifications: false,
      rowCount: 3,
      bytes: 1234,
      loadedAt: '2026-03-01T11:00:00.000Z',
      dataAsOf: '2026-03-01T11:30:00.000Z',
      sources: { objects: 2, digest: 'd1', newestModified: '2026-03-01T10:59:00.000Z' },
      lastRefresh: {
        kind: 'incremental',
        trigger: 'event',
        at: '2026-03-01T11:00:00.000Z',
        fetchedObjects: 1,
        fetchedBytes: 600,
        removedObjects: 0,
        ms: 42,
      },
    });
  });

  it('keeps the stored dataAsOf when only it moved, by less than a minute, so a source check writes nothing', () => {
    const stored = storedAfter('Running', loaded('2026-03-01T11:30:00Z'));
    const moved = new Date(Date.parse('2026-03-01T11:30:00Z') + DATA_AS_OF_STEP_MS - 1000).toISOString();
    const entry = computeLakeStatus(stored, running(loaded(moved)), NOW).datasets.a;
    expect(entry?.dataAsOf).toBe('2026-03-01T11:30:00.000Z');
  });

  it('copies a dataAsOf a minute or more later', () => {
    const stored = storedAfter('Running', loaded('2026-03-01T11:30:00Z'));
    const entry = computeLakeStatus(stored, running(loaded('2026-03-01T11:31:00Z')), NOW).datasets.a;
    expect(entry?.dataAsOf).toBe('2026-03-01T11:31:00.000Z');
  });

  it('copies a dataAsOf at once when the data changed with it', () => {
    const stored = storedAfter('Running', loaded('2026-03-01T11:30:00Z'));
    const entry = computeLakeStatus(stored, running(loaded('2026-03-01T11:30:05Z', 4)), NOW).datasets.a;
    expect(entry).toMatchObject({ rowCount: 4, dataAsOf: '2026-03-01T11:30:05.000Z' });
  });

  it('copies a dataAsOf at once when the dataset’s state changed (the status is written anyway)', () => {
    const stored = storedAfter('Running', { ...loaded('2026-03-01T11:30:00Z'), status: 'refreshing' });
    const entry = entryOf(stored, running(loaded('2026-03-01T11:30:05Z')));
    expect(entry).toMatchObject({ status: 'ready', dataAsOf: '2026-03-01T11:30:05.000Z' });
  });

  it('keeps the facts while the lake is paused (its disk holds the data) and GET /status shows them', () => {
    const paused = storedAfter('Hibernated', loaded('2026-03-01T11:30:00Z'));
    const entry = entryOf(paused, { notProvisioned: false, secretValues: [], workload: undefined });
    expect(entry).toMatchObject({ status: 'unknown', rowCount: 3, dataAsOf: '2026-03-01T11:30:00.000Z' });
    const shown = presentStatus(
      lakeOf('Hibernated', { vmStatus: 'paused', datasets: { a: entry } }),
      paused.spec.config,
    );
    expect(shown.datasets.a).toMatchObject({
      status: 'unknown',
      rowCount: 3,
      bytes: 1234,
      loadedAt: '2026-03-01T11:00:00.000Z',
      sources: { objects: 2, digest: 'd1' },
      lastRefresh: { kind: 'incremental', trigger: 'event' },
    });
  });

  it('leaves out a timestamp the lake wrote unreadably rather than fail the status write', () => {
    const entry = computeLakeStatus(
      lakeOf('Running'),
      running({ ...loaded('yesterday-ish'), loadedAt: 'soon' }),
      NOW,
    ).datasets.a;
    expect(entry?.dataAsOf).toBeUndefined();
    expect(entry?.loadedAt).toBeUndefined();
    expect(entry?.rowCount).toBe(3);
  });
});
