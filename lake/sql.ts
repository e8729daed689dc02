import { StatementType } from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import type { SqlResult } from '../platform/lake-protocol.js';
import type { LakeEngine } from './engine.js';
import { LakeError, messageOf } from './errors.js';
import { RowEncoder } from './json-values.js';
import type { JsonRow } from './json-values.js';

/**
 * Runs one query on a connection of its own. Only reading statements are allowed (SELECT and
 * EXPLAIN; DESCRIBE, SHOW and SUMMARIZE are SELECTs to DuckDB): DuckDB's lockdown already stops
 * file access, this also keeps SQL from dropping or creating the lake's tables and views.
 * Results stream: at most `rowLimit + 1` rows are ever converted, whatever the query returns.
 */

export interface QueryOptions {
  rowLimit: number;
  timeoutMs: number;
  /** Aborted when the caller went away: the query is interrupted. */
  signal?: AbortSignal;
}

const READING: ReadonlySet<StatementType> = new Set([StatementType.SELECT, StatementType.EXPLAIN]);

async function prepareReading(connection: DuckDBConnection, query: string) {
  let statements;
  try {
    statements = await connection.extractStatements(query);
  } catch (err) {
    throw new LakeError('sql_error', messageOf(err).replace(/^Failed to extract statements: /, ''), {
      cause: err,
    });
  }
  if (statements.count !== 1)
    throw new LakeError('sql_error', `send one SQL statement per query (this one has ${statements.count})`);
  const prepared = await statements.prepare(0);
  if (!READING.has(prepared.statementType))
    throw new LakeError('sql_error', 'only queries that read (SELECT, EXPLAIN) are allowed');
  return prepared;
}

async function readRows(
  result: DuckDBResult,
  rowLimit: number,
): Promise<{ rows: JsonRow[]; truncated: boolean }> {
  const encoder = new RowEncoder(result.deduplicatedColumnNames(), result.columnTypes());
  const rows: JsonRow[] = [];
  let truncated = false;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) break;
    // One row past the limit tells a result that was cut from one that fit exactly.
    encoder.encode(chunk, rowLimit + 1 - rows.length, rows);
    if (rows.length > rowLimit) {
      rows.length = rowLimit;
      truncated = true;
      break;
    }
  }
  return { rows, truncated };
}

function columnsOf(result: DuckDBResult): SqlResult['columns'] {
  const names = result.deduplicatedColumnNames();
  return result.columnTypes().map((type, index) => ({ name: names[index] ?? '', type: type.toString() }));
}

export function runQuery(engine: LakeEngine, query: string, options: QueryOptions): Promise<SqlResult> {
  return engine.withConnection((connection) => runOn(connection, query, options));
}

async function runOn(connection: DuckDBConnection, query: string, options: QueryOptions): Promise<SqlResult> {
  const started = performance.now();
  let stoppedBy: 'timeout' | 'caller' | undefined;
  const interrupt = (reason: 'timeout' | 'caller') => () => {
    stoppedBy ??= reason;
    connection.interrupt();
  };
  const timer = setTimeout(interrupt('timeout'), options.timeoutMs);
  const onAbort = interrupt('caller');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // The prepared statement and its result go with the connection (withConnection closes it).
    const prepared = await prepareReading(connection, query);
    const result = await prepared.stream();
    const { rows, truncated } = await readRows(result, options.rowLimit);
    return {
      rows,
      columns: columnsOf(result),
      rowCount: rows.length,
      truncated,
      elapsedMs: Math.round((performance.now() - started) * 10) / 10,
    };
  } catch (err) {
    if (stoppedBy === 'timeout')
      throw new LakeError('timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`, {
        cause: err,
      });
    if (err instanceof LakeError) throw err;
    throw new LakeError('sql_error', messageOf(err), { cause: err });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
