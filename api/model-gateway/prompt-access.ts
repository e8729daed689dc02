import type { IncomingMessage } from 'node:http';
import { isPromptLive, organizationOfNamespace } from '../../crds/index.js';
import type { Organization, Task } from '../../crds/index.js';
import type { PromptTokenClaims, PromptTokens } from '../../platform/model-gateway/token.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import type { ReadModel } from '../read-model.js';

/** A call the prompt token allows: its claims, and the task and organization as cached. */
export interface PromptAccess {
  claims: PromptTokenClaims;
  task: Task;
  /** The organization whose namespace the task is in. */
  organization: Organization;
}

const bearerOf = (value: string | undefined): string | undefined => {
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
};

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/**
 * The prompt token a CLI sent where it sends its provider key: Anthropic's `x-api-key` (or a
 * bearer token), OpenAI's bearer token, Google's `x-goog-api-key` (or the `key` query parameter).
 */
export function presentedToken(
  provider: ModelProvider,
  req: IncomingMessage,
  query: URLSearchParams,
): string | undefined {
  switch (provider) {
    case 'anthropic':
      return headerOf(req, 'x-api-key') ?? bearerOf(headerOf(req, 'authorization'));
    case 'openai':
      return bearerOf(headerOf(req, 'authorization'));
    case 'gemini':
      return headerOf(req, 'x-goog-api-key') ?? (query.get('key') || undefined);
  }
}

/** The organization whose namespace is `namespace`, as cached. */
export const organizationOf = (readModel: ReadModel, namespace: string): Organization | undefined =>
  organizationOfNamespace(readModel.organizations.list(), namespace);

/**
 * Whether a token still stands for a live prompt: genuine and unexpired, its task present and not
 * deleted, its prompt not ended (nor being canceled), its organization not being deleted. A token dies with its
 * prompt: that is its revocation (docs/adr/0009). Every failure is the same `undefined`, so an
 * answer never says which check failed.
 */
export class PromptAccessCheck {
  constructor(
    private readonly tokens: PromptTokens,
    private readonly readModel: ReadModel,
    private readonly now: () => Date,
  ) {}

  async check(token: string | undefined): Promise<PromptAccess | undefined> {
    const claims = this.claimsOf(token);
    if (claims === undefined) return undefined;
    const task = await this.readModel.taskReadThrough(claims.namespace, claims.task);
    const live = task !== undefined && isPromptLive(task, claims.prompt);
    const organization = organizationOf(this.readModel, claims.namespace);
    const deleting = organization?.metadata.deletionTimestamp !== undefined;
    if (task === undefined || !live || organization === undefined || deleting) return undefined;
    return { claims, task, organization };
  }

  /** The claims of a genuine, unexpired token (the usage endpoint reads the prompt fresh itself). */
  claimsOf(token: string | undefined): PromptTokenClaims | undefined {
    return token === undefined ? undefined : this.tokens.verify(token, this.now().getTime());
  }
}
