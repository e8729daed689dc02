import type { EgressRule } from '../crds/egress.js';
import { isPromptLive } from '../crds/index.js';
import type { Task } from '../crds/index.js';
import type { PromptTokenClaims, PromptTokens } from '../platform/model-gateway/token.js';
import type { EgressCaches } from './caches.js';

/** A connection's prompt, once its token checked out: whose it is and where it may go. */
export interface PromptAccess {
  claims: PromptTokenClaims;
  task: Task;
  /** The organization's name (metrics), or its namespace when the Organization is not known. */
  organization: string;
  /** The installation's rules, then the organization's, then the workspace's. */
  rules: readonly EgressRule[];
}

/** The token of `Proxy-Authorization: Basic base64(prompt:<token>)`; any user name is accepted. */
export function tokenOfProxyAuthorization(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** Checks a connection's credential and gathers its egress rules. */
export class PromptAccessCheck {
  constructor(
    private readonly tokens: PromptTokens,
    private readonly caches: EgressCaches,
    private readonly installationRules: readonly EgressRule[],
  ) {}

  /** The access of a live prompt's token, or undefined (missing, forged, expired, or its prompt ended). */
  async check(proxyAuthorization: string | undefined): Promise<PromptAccess | undefined> {
    const token = tokenOfProxyAuthorization(proxyAuthorization);
    const claims = token === undefined ? undefined : this.tokens.verify(token);
    if (claims === undefined) return undefined;
    const task = await this.caches.task(claims.namespace, claims.task);
    if (task === undefined || !isPromptLive(task, claims.prompt)) return undefined;
    const organization = this.caches.organizationOf(claims.namespace);
    return {
      claims,
      task,
      organization: organization?.metadata.name ?? claims.namespace,
      rules: [
        ...this.installationRules,
        ...(organization?.spec.egress?.allow ?? []),
        ...this.workspaceRules(claims),
      ],
    };
  }

  private workspaceRules(claims: PromptTokenClaims): readonly EgressRule[] {
    return this.caches.agentComputer(claims.namespace, claims.workspace)?.spec.egress?.allow ?? [];
  }
}
