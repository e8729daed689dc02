import { parseArgs } from 'node:util';
import { MAX_WAIT_FOR_MS } from '../../platform/lake-protocol.js';
import { parseDuration } from '../../platform/duration.js';
import { UsageError } from '../command.js';
import { LakeApi, lakeApiSettingsOf } from './lake-api.js';
import { DEFAULT_MAX_ROWS, describeTable, listTables, objectRefOf, runQuery } from './operations.js';
import { isLakeClientAction } from './usage.js';
import type { LakeClientAction } from './usage.js';
import { renderTable } from './output.js';
import { serveLakeMcp } from './mcp-server.js';

const OPTIONS = {
  json: { type: 'boolean', default: false },
  'max-rows': { type: 'string' },
  'wait-for': { type: 'string', multiple: true },
  'wait-timeout': { type: 'string' },
} as const;

function positiveInteger(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d{0,6}$/.test(value)) throw new UsageError(`${flag} must be a whole number from 1`);
  return Number(value);
}

function waitTimeoutMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch {
    throw new UsageError(`--wait-timeout ${value} is not a duration (e.g. 30s)`);
  }
  if (ms < 1 || ms > MAX_WAIT_FOR_MS) throw new UsageError('--wait-timeout must be from 1ms to 60s');
  return ms;
}

/** Where the output goes, and whether it is a terminal (a table) or not (JSON). */
export interface LakeClientIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

const defaultIo = (): LakeClientIo => ({
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});

type ParsedValues = ReturnType<
  typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
>['values'];

/** The action and its one operand (the table, the SQL), or a UsageError. */
function actionAndOperand(positionals: readonly string[]): { action: LakeClientAction; operand: string } {
  const [action, ...operands] = positionals;
  if (!isLakeClientAction(action)) throw new UsageError(`unknown action "${action ?? ''}"`);
  const expected = action === 'schema' || action === 'query' ? 1 : 0;
  if (operands.length !== expected)
    throw new UsageError(
      expected === 0
        ? `${action} takes no arguments`
        : `${action} takes one argument: ${action === 'schema' ? 'the table' : 'the SQL, quoted'}`,
    );
  return { action, operand: operands[0] ?? '' };
}

/** What one run has: the API, the output's form and where it goes. */
interface Run {
  api: LakeApi;
  io: LakeClientIo;
  json: boolean;
  maxRows: number;
}

const writeLine = (run: Run, text: string): void => {
  run.io.stdout.write(`${text}\n`);
};

async function printTables(run: Run): Promise<void> {
  const tables = await listTables(run.api);
  writeLine(run, run.json ? JSON.stringify({ tables }) : renderTable(['name', 'kind', 'definition'], tables));
}

async function printSchema(run: Run, table: string): Promise<void> {
  const columns = await describeTable(run.api, table);
  writeLine(
    run,
    run.json ? JSON.stringify({ table, columns }) : renderTable(['name', 'type', 'nullable'], columns),
  );
}

async function printQuery(run: Run, sql: string, values: ParsedValues): Promise<void> {
  const timeout = waitTimeoutMs(values['wait-timeout']);
  const answer = await runQuery(run.api, sql, {
    maxRows: run.maxRows,
    waitFor: (values['wait-for'] ?? []).map(objectRefOf),
    ...(timeout === undefined ? {} : { waitTimeoutMs: timeout }),
  });
  if (answer.warning !== undefined)
    run.io.stderr.write(`agentry lake: the API server says: ${answer.warning}\n`);
  if (run.json) {
    writeLine(run, JSON.stringify(answer));
    return;
  }
  const columns = answer.columns.map((column) => column.name);
  writeLine(run, renderTable(columns, answer.rows));
  writeLine(run, answer.note === undefined ? `(${answer.rowCount} rows)` : `(${answer.note})`);
}

/** Runs `agentry lake <action> ...`; a failure throws (main prints it and exits 1, or 2 for usage). */
export async function runLakeClient(
  args: readonly string[],
  io: LakeClientIo = defaultIo(),
): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true });
  const { action, operand } = actionAndOperand(positionals);
  const maxRows = positiveInteger(values['max-rows'], '--max-rows', DEFAULT_MAX_ROWS);
  const api = new LakeApi(lakeApiSettingsOf(io.env));
  if (action === 'mcp') return serveLakeMcp(api, { input: io.stdin, output: io.stdout, maxRows });
  const run: Run = { api, io, json: values.json || io.stdout.isTTY !== true, maxRows };
  if (action === 'tables') await printTables(run);
  else if (action === 'schema') await printSchema(run, operand);
  else await printQuery(run, operand, values);
  return 0;
}
