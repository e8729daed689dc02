import { z } from 'zod';
import type { ObjectRef } from '../../platform/lake-protocol.js';
import type { LakeApi, QueryAnswer, QueryOptions } from './lake-api.js';
import { LakeClientError } from './lake-api.js';

/**
 * What the lake client does, once for the command line and the MCP tools alike: list the tables,
 * describe one, run a query. Answers are bounded here, whatever the lake returns: an agent reads
 * them into its context.
 */

/** A table SQL can name: a dataset (loaded from `from`) or a view (named SQL). */
export interface LakeTable {
  name: string;
  kind: 'dataset' | 'view';
  /** The dataset's source, or the view's SQL. */
  definition: string;
}

export async function listTables(api: LakeApi): Promise<LakeTable[]> {
  const [datasets, views] = await Promise.all([api.datasets(), api.views()]);
  return [
    ...datasets.map((dataset) => ({
      name: dataset.name,
      kind: 'dataset' as const,
      definition: dataset.from,
    })),
    ...views.map((view) => ({ name: view.name, kind: 'view' as const, definition: view.sql })),
  ];
}

/** A table's name as the lake accepts it (crds/context-lake/types.ts): nothing to quote, nothing to inject. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface LakeColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/** One row of DuckDB's DESCRIBE. */
const DescribeRowSchema = z.looseObject({
  column_name: z.string(),
  column_type: z.string(),
  null: z.unknown(),
});

export async function describeTable(api: LakeApi, table: string): Promise<LakeColumn[]> {
  if (!TABLE_NAME.test(table))
    throw new LakeClientError(
      `"${table}" is not a table name (letters, digits and _, as agentry lake tables lists them)`,
    );
  const answer = await api.query(`DESCRIBE ${table}`);
  return answer.rows.map((row) => {
    const parsed = DescribeRowSchema.parse(row);
    return { name: parsed.column_name, type: parsed.column_type, nullable: parsed.null !== 'NO' };
  });
}

/** The most rows an answer shows unless asked for more (`--max-rows`). */
export const DEFAULT_MAX_ROWS = 200;

/** An answer cut to at most `maxRows` rows; `truncated` says rows were left out, `note` how to get them. */
export type BoundedAnswer = QueryAnswer & { note?: string };

export async function runQuery(
  api: LakeApi,
  sql: string,
  options: QueryOptions & { maxRows: number },
): Promise<BoundedAnswer> {
  const { maxRows, ...queryOptions } = options;
  const answer = await api.query(sql, queryOptions);
  if (answer.rows.length <= maxRows && !answer.truncated) return answer;
  const rows = answer.rows.slice(0, maxRows);
  const more = answer.truncated ? 'more rows' : `${answer.rows.length - rows.length} more rows`;
  return {
    ...answer,
    rows,
    rowCount: rows.length,
    truncated: true,
    note: `showing the first ${rows.length} rows; ${more} left out: aggregate, add a LIMIT, or raise --max-rows`,
  };
}

/**
 * `--wait-for`'s value as an object reference (platform/lake-protocol.ts): `s3://bucket/key`, an
 * https URL or a path below a file dataset; `#<etag>` at the end names one version of it.
 */
export function objectRefOf(value: string): ObjectRef {
  const hash = value.lastIndexOf('#');
  const location = hash === -1 ? value : value.slice(0, hash);
  const etag = hash === -1 ? undefined : value.slice(hash + 1);
  const withEtag = (ref: ObjectRef): ObjectRef =>
    etag === undefined || etag === '' ? ref : { ...ref, etag };
  const s3 = /^s3:\/\/([^/]+)\/(.+)$/.exec(location);
  if (s3 !== null) return withEtag({ bucket: s3[1] ?? '', key: s3[2] ?? '' });
  if (location.startsWith('s3://'))
    throw new LakeClientError(`--wait-for ${value}: an S3 object is s3://<bucket>/<key>`);
  if (location === '') throw new LakeClientError('--wait-for needs an object: s3://<bucket>/<key>');
  return withEtag({ key: location });
}
