import { StatementType } from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import type { SqlResult } from '../platform/lake-protocol.js';
import type { LakeEngine } from './engine.js';
import { LakeError, messageOf, withoutServerPaths } from './errors.js';
import { datasetsRead } from './datasets-read.js';
import { RowEncoder } from './json-values.js';

/**
 * Runs one query on a connection of its own. Only reading statements are allowed (SELECT and
 * EXPLAIN; DESCRIBE, SHOW and SUMMARIZE are SELECTs to DuckDB): DuckDB's lockdown already stops
 * file access, this also keeps SQL from dropping or creating the lake's tables and views.
 * Results stream: at most `rowLimit + 1` rows are ever converted, whatever the query returns, and
 * each row becomes its JSON text at once, so that an answer past `maxResultBytes` stops there.
 */

export interface QueryOptions {
  rowLimit: number;
  /** Bytes of the rows' JSON; a larger answer is refused with result_too_large. */
  maxResultBytes: number;
  timeoutMs: number;
  /** Aborted when the caller went away: the query is interrupted. */
  signal?: AbortSignal;
  /** `dataAsOf` of the datasets the query reads (asked before it runs: the answer is at least that fresh). */
  freshness?: (datasets: string[]) => Record<string, string>;
}

const READING: ReadonlySet<StatementType> = new Set([StatementType.SELECT, StatementType.EXPLAIN]);

async function prepareReading(connection: DuckDBConnection, query: string) {
  let statements;
  try {
    statements = await connection.extractStatements(query);
  } catch (err) {
    const message = messageOf(err).replace(/^Failed to extract statements: /, '');
    throw new LakeError('sql_error', withoutServerPaths(message), {
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

/** A query's answer with each row already JSON text (server.ts writes the body from the pieces). */
export type EncodedResult = Omit<SqlResult, 'rows'> & { rowTexts: string[] };

const tooLarge = (maxBytes: number, cause?: unknown): LakeError =>
  new LakeError(
    'result_too_large',
    `the answer is larger than the limit of ${maxBytes} bytes (AGENTRY_LAKE_MAX_RESULT_BYTES): select fewer rows or columns`,
    { cause },
  );

async function readRows(
  result: DuckDBResult,
  options: Pick<QueryOptions, 'rowLimit' | 'maxResultBytes'>,
): Promise<{ rowTexts: string[]; truncated: boolean }> {
  const encoder = new RowEncoder(result.deduplicatedColumnNames(), result.columnTypes());
  const rowTexts: string[] = [];
  let bytes = 0;
  let stop: 'truncated' | 'too large' | undefined;
  const take = (row: Record<string, unknown>): boolean => {
    // One row past the limit tells a result that was cut from one that fit exactly.
    if (rowTexts.length === options.rowLimit) stop = 'truncated';
    else {
      const text = JSON.stringify(row);
      bytes += Buffer.byteLength(text) + 1; // and its comma
      if (bytes > options.maxResultBytes) stop = 'too large';
      else rowTexts.push(text);
    }
    return stop === undefined;
  };
  while (stop === undefined) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) break;
    try {
      encoder.eachRow(chunk, take);
    } catch (err) {
      // A single value past what a JavaScript string can hold.
      if (err instanceof RangeError) throw tooLarge(options.maxResultBytes, err);
      throw err;
    }
  }
  if (stop === 'too large') throw tooLarge(options.maxResultBytes);
  return { rowTexts, truncated: stop === 'truncated' };
}

function columnsOf(result: DuckDBResult): SqlResult['columns'] {
  const names = result.deduplicatedColumnNames();
  return result.columnTypes().map((type, index) => ({ name: names[index] ?? '', type: type.toString() }));
}

export function runQuery(engine: LakeEngine, query: string, options: QueryOptions): Promise<EncodedResult> {
  return engine.withConnection((connection) => runOn(connection, query, options));
}

async function runOn(
  connection: DuckDBConnection,
  query: string,
  options: QueryOptions,
): Promise<EncodedResult> {
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
    const { freshness } = options;
    const dataAsOf =
      freshness !== undefined && prepared.statementType === StatementType.SELECT
        ? freshness(await datasetsRead(connection, query))
        : undefined;
    const result = await prepared.stream();
    const { rowTexts, truncated } = await readRows(result, options);
    return {
      rowTexts,
      columns: columnsOf(result),
      rowCount: rowTexts.length,
      truncated,
      elapsedMs: Math.round((performance.now() - started) * 10) / 10,
      ...(dataAsOf === undefined ? {} : { dataAsOf }),
    };
  } catch (err) {
    if (stoppedBy === 'timeout')
      throw new LakeError('timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`, {
        cause: err,
      });
    if (err instanceof LakeError) throw err;
    throw new LakeError('sql_error', withoutServerPaths(messageOf(err)), { cause: err });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
