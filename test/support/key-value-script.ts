// Our build scripts (images/build.sh, images/vm/build-guest-image.sh) report what they built as
// KEY=value lines in an --out file: run one with its progress on our stderr and read those lines.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Runs `bash <script> <args...> --out <outFile>`; the KEY=value lines it wrote, or `failure()` thrown. */
export async function runKeyValueScript(
  script: string,
  args: string[],
  outFile: string,
  failure: (exitCode: number | null) => Error,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Record<string, string>> {
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [script, ...args, '--out', outFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (exitCode !== 0) throw failure(exitCode);
  const lines = (await readFile(outFile, 'utf8')).split('\n').filter((line) => line.includes('='));
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
