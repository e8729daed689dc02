import { Time } from '../../components/time.js';
import type { DatasetStatus, LakeCatalog } from './lake-api.js';

/** Dataset statuses are `unknown` while the lake does not run (docs/api.md#states). */
function DatasetState({ state }: { state: DatasetStatus | undefined }) {
  if (state === undefined) return <span class="muted">not reported yet</span>;
  return (
    <>
      <span class={`status status-${state.status}`} data-status={state.status}>
        {state.status}
      </span>
      {state.error !== undefined && <div class="action-error">{state.error}</div>}
    </>
  );
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** 1,536 → `1.5 KB` (decimal units, as S3 reports sizes). */
export function byteSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${BYTE_UNITS[unit] ?? ''}`;
}

/** What the lake holds of the dataset: rows, source bytes, and how current it is. */
function DatasetData({ state }: { state: DatasetStatus | undefined }) {
  if (state?.rowCount === undefined) return <span class="muted">—</span>;
  return (
    <span>
      {state.rowCount.toLocaleString('en-US')} {state.rowCount === 1 ? 'row' : 'rows'}
      {state.bytes !== undefined && ` · ${byteSize(state.bytes)}`}
      {state.dataAsOf !== undefined && (
        <>
          {' '}
          · as of <Time iso={state.dataAsOf} />
        </>
      )}
    </span>
  );
}

/** S3 bucket notifications that refresh the dataset, when it has them. */
function Notifications({ state }: { state: DatasetStatus | undefined }) {
  if (state?.notifications !== true) return <span class="muted">off</span>;
  return (
    <span>
      {state.s3EventCount ?? 0} events
      {state.s3LastRefreshAt !== undefined && (
        <>
          , refreshed <Time iso={state.s3LastRefreshAt} />
        </>
      )}
    </span>
  );
}

/** The lake's datasets with their status, and its views (which have no status of their own). */
export function LakeCatalogTables({ catalog }: { catalog: LakeCatalog }) {
  const { status, datasets, views } = catalog;
  return (
    <>
      <p>
        Lake: <span class={`status status-${status.vmStatus}`}>{status.vmStatus}</span>{' '}
        <span class="muted">(a query starts a paused lake; it pauses after 15 idle minutes)</span>
      </p>
      <h2>Datasets</h2>
      {datasets.length === 0 ? (
        <p class="muted">No datasets. Add one with POST /v1/context-lake/datasets.</p>
      ) : (
        <table class="admin datasets">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">From</th>
              <th scope="col">Status</th>
              <th scope="col">Data</th>
              <th scope="col">Connector</th>
              <th scope="col">Notifications</th>
            </tr>
          </thead>
          <tbody>
            {datasets.map((dataset) => {
              const state = status.datasets[dataset.name];
              return (
                <tr key={dataset.name} data-dataset={dataset.name}>
                  <td>
                    <code>{dataset.name}</code>
                  </td>
                  <td>
                    <code>{dataset.from}</code>
                  </td>
                  <td>
                    <DatasetState state={state} />
                  </td>
                  <td class="dataset-data">
                    <DatasetData state={state} />
                  </td>
                  <td>{state?.connectorId ?? '—'}</td>
                  <td>
                    <Notifications state={state} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <h2>Views</h2>
      {views.length === 0 ? (
        <p class="muted">No views.</p>
      ) : (
        <table class="admin views">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">SQL</th>
            </tr>
          </thead>
          <tbody>
            {views.map((view) => (
              <tr key={view.name} data-view={view.name}>
                <td>
                  <code>{view.name}</code>
                </td>
                <td>
                  <code class="view-sql">{view.sql}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
