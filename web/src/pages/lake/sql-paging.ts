/**
 * The lake's SQL route has no cursor: it answers at most its row limit (10,000) and says
 * `truncated`. Later rows are had by running the query again inside
 * `SELECT * FROM (<query>) OFFSET n`; the lake's limit still bounds each answer and its `truncated`
 * still says whether more follow. Rows of a query without ORDER BY may come in another order each
 * run, which the page says.
 */
export function queryFromOffset(query: string, offset: number): string {
  if (offset === 0) return query;
  // Trailing semicolons would end the statement inside the parentheses; a newline closes any
  // trailing `--` comment before them.
  const statement = query.trim().replace(/[;\s]+$/, '');
  return `SELECT * FROM (\n${statement}\n) AS agentry_rows OFFSET ${String(offset)}`;
}

/** Rows shown at once: a lake answer of 10,000 rows is shown a page at a time, never all in the DOM. */
export const ROWS_PER_PAGE = 50;
