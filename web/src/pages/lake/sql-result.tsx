import { useState } from 'preact/hooks';
import { Time } from '../../components/time.js';
import { ROWS_PER_PAGE } from './sql-paging.js';
import type { SqlResult } from './lake-api.js';

export interface SqlResultProps {
  result: SqlResult;
  /** Rows of the whole answer before this one (0 for the query as written). */
  offset: number;
  /** Rows per lake answer: the size of the first truncated one (the lake's row limit). */
  batchSize: number;
  busy: boolean;
  /** Asks the lake for the rows from this offset on. */
  onOffset: (offset: number) => void;
}

function Cell({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="null">NULL</span>;
  if (typeof value === 'object') return <>{JSON.stringify(value)}</>;
  if (typeof value === 'string') return <>{value}</>;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return <>{value.toString()}</>;
  return <>{JSON.stringify(value)}</>;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** An answer is as current as the stalest dataset it read; each one's time is on hover. */
function DataAsOf({ dataAsOf }: { dataAsOf: Record<string, string> | undefined }) {
  const entries = Object.entries(dataAsOf ?? {});
  const stalest = entries.map(([, iso]) => iso).sort()[0];
  if (stalest === undefined) return null;
  const each = entries.map(([name, iso]) => `${name}: ${iso}`).join('\n');
  return (
    <span class="data-as-of" title={each}>
      {' · data as of '}
      <Time iso={stalest} />
    </span>
  );
}

/** Whether more rows follow this answer, and where the other answers are. */
function LakePager({ result, offset, batchSize, busy, onOffset }: SqlResultProps) {
  if (!result.truncated && offset === 0) return null;
  return (
    <div class="truncated" role="status">
      <p>
        {result.truncated
          ? `The lake answers at most ${count(result.rowCount)} rows at a time: this answer was cut (truncated). `
          : 'These are the last rows. '}
        Other rows come from running the query again with OFFSET; add an ORDER BY for a stable order.
      </p>
      <nav class="pager" aria-label="Answers of the lake">
        <button
          type="button"
          disabled={busy || offset === 0}
          onClick={() => {
            onOffset(Math.max(0, offset - batchSize));
          }}
        >
          Previous {count(batchSize)} rows
        </button>
        <button
          type="button"
          disabled={busy || !result.truncated}
          onClick={() => {
            onOffset(offset + result.rowCount);
          }}
        >
          Next {count(batchSize)} rows
        </button>
      </nav>
    </div>
  );
}

/** The answer as a table, ROWS_PER_PAGE rows at a time, with the lake's truncation and its paging. */
export function SqlResultTable(props: SqlResultProps) {
  const { result, offset } = props;
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(result.rows.length / ROWS_PER_PAGE));
  const first = page * ROWS_PER_PAGE;
  const shown = result.rows.slice(first, first + ROWS_PER_PAGE);
  return (
    <div class="sql-result">
      <p class="muted" aria-live="polite">
        {count(result.rowCount)} {result.rowCount === 1 ? 'row' : 'rows'} in {count(result.elapsedMs)} ms
        {shown.length > 0 &&
          ` · showing rows ${count(offset + first + 1)}–${count(offset + first + shown.length)}`}
        <DataAsOf dataAsOf={result.dataAsOf} />
      </p>
      <LakePager {...props} />
      <div class="table-scroll">
        <table class="admin sql-rows">
          <thead>
            <tr>
              {result.columns.map((column) => (
                <th scope="col" key={column.name} title={column.type}>
                  {column.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row, index) => (
              <tr key={first + index}>
                {result.columns.map((column) => (
                  <td key={column.name}>
                    <Cell value={row[column.name]} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pages > 1 && (
        <nav class="pager" aria-label="Pages of this answer">
          <button
            type="button"
            disabled={page === 0}
            onClick={() => {
              setPage(page - 1);
            }}
          >
            Previous page
          </button>
          <span>
            Page {page + 1} of {pages}
          </span>
          <button
            type="button"
            disabled={page + 1 >= pages}
            onClick={() => {
              setPage(page + 1);
            }}
          >
            Next page
          </button>
        </nav>
      )}
    </div>
  );
}
