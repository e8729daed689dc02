import type { DispatchPrompt } from '../platform/runner-protocol.js';
import { downloadFile, WorkspacePrepError } from './workspace-files.js';
import { cloneRepository, proxyVariablesOf } from './workspace-git.js';

export { filenameProblem, workspaceFilePath, WorkspacePrepError } from './workspace-files.js';
export { redactCredentials, repositoryUrl } from './workspace-git.js';

/** Neither a clone nor a download may hold the queue for ever; the operator can still cancel sooner. */
const DEFAULT_PREP_TIMEOUT_MS = 30 * 60 * 1000;

export interface PrepareWorkspaceOptions {
  workdir: string;
  request: Pick<DispatchPrompt, 'githubUrl' | 'branch' | 'files'> & {
    /** The executor's environment: its egress proxy variables apply to the clone too. */
    executor?: { env: Readonly<Record<string, string>> };
  };
  /** Aborted when the prompt is canceled or the runner stops. */
  signal: AbortSignal;
  timeoutMs?: number;
}

/**
 * Gets the working directory ready for a prompt: clones its repository (once), then downloads its
 * files, so that an attachment wins over a file of the same name in the repository. Throws a
 * WorkspacePrepError with a message fit for the prompt's `error` event; rethrows the abort reason
 * when `signal` aborted.
 */
export async function prepareWorkspace(options: PrepareWorkspaceOptions): Promise<void> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_PREP_TIMEOUT_MS);
  const signal = AbortSignal.any([options.signal, timeout]);
  const { request, workdir } = options;
  try {
    signal.throwIfAborted();
    if (request.githubUrl !== undefined)
      await cloneRepository(
        workdir,
        request.githubUrl,
        request.branch ?? 'main',
        signal,
        proxyVariablesOf(request.executor?.env ?? {}),
      );
    for (const file of request.files) await downloadFile(workdir, file, signal);
  } catch (err) {
    options.signal.throwIfAborted();
    if (timeout.aborted)
      throw new WorkspacePrepError('preparing the workspace took too long', { cause: err });
    throw err;
  }
}
