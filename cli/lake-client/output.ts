/**
 * Rows as a plain-text table for a terminal: one line per row, columns padded, long values cut so
 * a wide table stays readable (the JSON output has them whole).
 */

/** The widest a cell is shown. */
const MAX_CELL_CHARS = 60;

function cellText(value: unknown): string {
  const text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > MAX_CELL_CHARS ? `${oneLine.slice(0, MAX_CELL_CHARS - 1)}…` : oneLine;
}

export function renderTable<Row extends object>(
  columns: readonly (keyof Row & string)[],
  rows: readonly Row[],
): string {
  const cells = rows.map((row) => columns.map((column) => cellText(row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((line) => line[index]?.length ?? 0)),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((value, index) => value.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
