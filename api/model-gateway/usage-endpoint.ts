import type { IncomingMessage, ServerResponse } from 'node:http';
import { TaskType, promptEntryOf } from '../../crds/index.js';
import type { ModelUsage, ModelUsageTotals } from '../../crds/index.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { PromptAccessCheck } from './prompt-access.js';

/** `GET /model-gateway/usage`: what the runner reports when its prompt ends. */
export interface PromptUsageAnswer {
  prompt: ModelUsage | null;
  task: ModelUsageTotals | null;
}

const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const bearerToken = (req: IncomingMessage): string | undefined =>
  /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];

/**
 * The usage of the token's prompt and task, read from the store (not the cache: the runner asks
 * right after the executor exited, when the last call's write may be a moment old). A prompt that
 * just ended is still answered (its token has not expired); a forged or expired token, or a task
 * that is gone, is not.
 */
export async function answerUsage(
  req: IncomingMessage,
  res: ServerResponse,
  options: { store: ResourceStore; access: PromptAccessCheck },
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    sendJson(res, 405, { error: { code: 'method_not_allowed', message: 'use GET' } });
    return;
  }
  const claims = options.access.claimsOf(bearerToken(req));
  const task =
    claims === undefined ? undefined : await options.store.get(TaskType, claims.namespace, claims.task);
  if (claims === undefined || task === undefined || task.spec.deletedAt !== undefined) {
    sendJson(res, 401, { error: { code: 'unauthorized', message: 'the prompt token is not valid' } });
    return;
  }
  const answer: PromptUsageAnswer = {
    prompt: promptEntryOf(task, claims.prompt)?.usage ?? null,
    task: task.status?.usage ?? null,
  };
  sendJson(res, 200, answer);
}
