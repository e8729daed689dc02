import type { Response } from 'express';
import type { EncodedResult } from './sql.js';

/** Pieces of the body are written in batches of about this many characters. */
const BATCH_CHARS = 64 * 1024;

/**
 * Writes a SqlResult (platform/lake-protocol.ts) from rows already encoded, piece by piece: the
 * answer is bounded (AGENTRY_LAKE_MAX_RESULT_BYTES), and no single string holds all of it.
 */
export function writeResult(res: Response, result: EncodedResult): void {
  res.status(200).type('application/json');
  let batch = '{"rows":[';
  result.rowTexts.forEach((text, index) => {
    if (batch.length + text.length > BATCH_CHARS) {
      res.write(batch);
      batch = '';
    }
    batch += index === 0 ? text : `,${text}`;
  });
  const rest = {
    columns: result.columns,
    rowCount: result.rowCount,
    truncated: result.truncated,
    elapsedMs: result.elapsedMs,
    ...(result.dataAsOf === undefined ? {} : { dataAsOf: result.dataAsOf }),
  };
  // `{"columns":...}` without its opening brace follows the rows.
  res.end(`${batch}],${JSON.stringify(rest).slice(1)}`);
}
