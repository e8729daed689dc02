import { useRef, useState } from 'preact/hooks';
import { failureMessage } from '../../components/failure-message.js';
import { ApiFailure } from '../../http/client.js';
import { runSql } from './lake-api.js';
import type { SqlResult } from './lake-api.js';
import { queryFromOffset } from './sql-paging.js';
import { SqlResultTable } from './sql-result.js';

/** An answer shown: the query as written, where in its rows this answer starts, and the answer. */
interface Answer {
  query: string;
  offset: number;
  batchSize: number;
  result: SqlResult;
  /** Tells one answer from the next, so the table starts again at its first page. */
  serial: number;
}

type Failure = { kind: 'sql'; message: string } | { kind: 'other'; message: string };

export interface SqlConsoleProps {
  /** The organization has no Pro plan: the page says so instead of the console. */
  onSubscriptionRequired: () => void;
  /** The lake answered (a query starts a paused lake, so its status may have changed). */
  onAnswered: () => void;
}

const EXAMPLE = 'SELECT 42 AS answer';

/** The SQL box: Run (or Ctrl/Cmd+Enter) posts the query; the answer is a table, paged on truncation. */
export function SqlConsole({ onSubscriptionRequired, onAnswered }: SqlConsoleProps) {
  const [text, setText] = useState(EXAMPLE);
  const [answer, setAnswer] = useState<Answer | undefined>(undefined);
  const [failure, setFailure] = useState<Failure | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const serial = useRef(0);

  const run = async (query: string, offset: number, batchSize: number | undefined): Promise<void> => {
    if (busy || query.trim() === '') return;
    setBusy(true);
    setFailure(undefined);
    try {
      const result = await runSql(queryFromOffset(query, offset));
      serial.current += 1;
      const size = batchSize ?? Math.max(1, result.rowCount);
      setAnswer({ query, offset, batchSize: size, result, serial: serial.current });
      onAnswered();
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'subscription_required') onSubscriptionRequired();
      const kind = err instanceof ApiFailure && err.code === 'sql_error' ? 'sql' : 'other';
      setFailure({ kind, message: failureMessage(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="sql-console" aria-label="SQL">
      <h2>SQL</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run(text, 0, undefined);
        }}
      >
        <textarea
          name="query"
          aria-label="SQL query"
          rows={6}
          spellcheck={false}
          value={text}
          onInput={(event) => {
            setText(event.currentTarget.value);
          }}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void run(text, 0, undefined);
            }
          }}
        />
        <div class="sql-actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
          <span class="muted">Ctrl+Enter (⌘+Enter) runs it. One read statement: SELECT or EXPLAIN.</span>
        </div>
      </form>
      {failure !== undefined && (
        <p class="action-error sql-error" role="alert">
          {failure.kind === 'sql' ? `SQL error: ${failure.message}` : failure.message}
        </p>
      )}
      {answer !== undefined && (
        <SqlResultTable
          key={answer.serial}
          result={answer.result}
          offset={answer.offset}
          batchSize={answer.batchSize}
          busy={busy}
          onOffset={(offset) => void run(answer.query, offset, answer.batchSize)}
        />
      )}
    </section>
  );
}
