import { DATASET_VIEW_COMMENT, identifier, literal } from './engine.js';
import type { LakeEngine } from './engine.js';

/**
 * Where a dataset's rows live in the database file (docs/adr/0010-durable-incremental-lake.md):
 * an internal table `agentry_data."<name>"` with one more column, the id of the source object
 * each row came from, and the dataset's name a view that leaves that column out, so `SELECT *`
 * answers exactly the source's columns. Staging tables sit beside it under names with a `-`,
 * which no dataset name has (dataset names are SQL identifiers), so they never clash; a table
 * can only be renamed within its schema.
 */

export const DATA_SCHEMA = 'agentry_data';
/** The column of each row's source object (its id in the catalog). */
export const OBJECT_COLUMN = '__agentry_object';
/** The read functions' `filename` column while reading staged files; never stored. */
export const FILE_COLUMN = '__agentry_file';

const STAGING_PREFIX = 'staging-';

/** The internal table of a dataset's rows. */
export const dataTable = (name: string): string => `${DATA_SCHEMA}.${identifier(name)}`;

/** The table a load or an incremental refresh builds before its commit. */
export const stagingTable = (name: string): string =>
  `${DATA_SCHEMA}.${identifier(`${STAGING_PREFIX}${name}`)}`;

/** Run once at start: the schema, and no staging table a crash may have left. */
export async function prepareDataSchema(engine: LakeEngine): Promise<void> {
  await engine.run(`CREATE SCHEMA IF NOT EXISTS ${DATA_SCHEMA}`);
  const leftovers = await engine.rows(
    `SELECT table_name FROM duckdb_tables() WHERE schema_name = ${literal(DATA_SCHEMA)}
       AND starts_with(table_name, ${literal(STAGING_PREFIX)})`,
  );
  for (const row of leftovers) {
    const name = typeof row === 'object' && row !== null && 'table_name' in row ? row.table_name : undefined;
    if (typeof name === 'string') await engine.run(`DROP TABLE IF EXISTS ${DATA_SCHEMA}.${identifier(name)}`);
  }
}

/** The dataset's view over its internal table, marked so that view management leaves it alone. */
export function datasetViewStatements(name: string): string[] {
  return [
    `CREATE OR REPLACE VIEW ${identifier(name)} AS SELECT * EXCLUDE (${identifier(OBJECT_COLUMN)}) FROM ${dataTable(name)}`,
    `COMMENT ON VIEW ${identifier(name)} IS ${literal(DATASET_VIEW_COMMENT)}`,
  ];
}

/** Drops a dataset's view and table (one transaction with its catalog rows). */
export const dropDatasetStatements = (name: string): string[] => [
  `DROP VIEW IF EXISTS ${identifier(name)}`,
  `DROP TABLE IF EXISTS ${dataTable(name)}`,
];

/**
 * The dataset a table read by a query belongs to: EXPLAIN names tables `<catalog>.<schema>.<name>`;
 * a table of the data schema is a dataset's, whatever view the query went through.
 */
export function datasetOfTable(qualified: string): string | undefined {
  const marker = `.${DATA_SCHEMA}.`;
  const at = qualified.indexOf(marker);
  if (at < 0) return undefined;
  const name = qualified.slice(at + marker.length);
  return name.startsWith(STAGING_PREFIX) ? undefined : name;
}

/** Whether every column of the staging table is one of the dataset table's (names ignore case, as SQL's do). */
export async function columnsFit(engine: LakeEngine, name: string): Promise<boolean> {
  const rows = await engine.rows(
    `SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = ${literal(DATA_SCHEMA)}
       AND table_name IN (${literal(name)}, ${literal(`${STAGING_PREFIX}${name}`)})`,
  );
  const table = new Set<string>();
  const staged: string[] = [];
  for (const row of rows) {
    if (typeof row !== 'object' || row === null || !('table_name' in row) || !('column_name' in row))
      continue;
    const column = String(row.column_name).toLowerCase();
    if (row.table_name === name) table.add(column);
    else staged.push(column);
  }
  return staged.every((column) => table.has(column));
}
