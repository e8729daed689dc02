/** One `agentry` subcommand: its help and how it runs. Each lives in its own module, loaded on use. */
export interface CliCommand {
  /**
   * What `agentry NAME [ACTION] --help` prints: synopsis, options with the settings they read and
   * their defaults, an example. `action` is the first word after NAME, for commands that have them.
   */
  usage(action: string | undefined): string;
  /** Runs with the arguments after NAME (`--help` never reaches it). */
  run(args: string[]): Promise<number>;
}

/** Bad command-line input: `agentry NAME: <message> (see agentry NAME --help)`, exit 2, nothing done. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The arguments a command reads as options; `--` ends them. */
const optionPart = (args: readonly string[]): readonly string[] =>
  args.includes('--') ? args.slice(0, args.indexOf('--')) : args;

/** Whether the arguments ask for help (`--help` or `-h` anywhere before `--`). */
export const wantsHelp = (args: readonly string[]): boolean =>
  optionPart(args).some((arg) => arg === '--help' || arg === '-h');

/** The first word that is not an option: the action of `agentry orgs create …`. */
export const actionOf = (args: readonly string[]): string | undefined =>
  optionPart(args).find((arg) => !arg.startsWith('-'));

/**
 * The one-line reason of a `util.parseArgs` error (unknown option, missing value, unexpected
 * argument), or undefined for any other error. Node's messages add advice after the first sentence.
 */
export function parseArgsProblem(err: unknown): string | undefined {
  if (!(err instanceof Error) || !('code' in err)) return undefined;
  if (typeof err.code !== 'string' || !err.code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const [first = err.message] = err.message.split(/\.\s/);
  return first.charAt(0).toLowerCase() + first.slice(1);
}
