import type { DuckDBConnection } from '@duckdb/node-api';
import { datasetOfTable } from './tables.js';

/**
 * The datasets a query reads, for its answer's `dataAsOf`: DuckDB's physical plan (EXPLAIN in
 * JSON) names every table scanned after views are expanded, so a query through any view counts
 * the datasets underneath. A plan DuckDB cannot explain reads no dataset as far as this knows.
 */

/** Every `Table` an operator of the plan names (`<catalog>.<schema>.<table>`). */
function tablesIn(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const child of node) tablesIn(child, into);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  for (const [field, value] of Object.entries(node)) {
    if (field === 'Table' && typeof value === 'string') into.add(value);
    else if (typeof value === 'object') tablesIn(value, into);
  }
}

export async function datasetsRead(connection: DuckDBConnection, query: string): Promise<string[]> {
  let plan: unknown;
  try {
    const reader = await connection.runAndReadAll(`EXPLAIN (FORMAT JSON) ${query}`);
    const text = reader.getRows()[0]?.[1];
    plan = typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return [];
  }
  const tables = new Set<string>();
  tablesIn(plan, tables);
  const datasets = new Set<string>();
  for (const table of tables) {
    const dataset = datasetOfTable(table);
    if (dataset !== undefined) datasets.add(dataset);
  }
  return [...datasets];
}
