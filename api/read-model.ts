import { AgentComputerType, OrganizationType, SecretType } from '../crds/index.js';
import type { AgentComputer, Organization, Secret } from '../crds/index.js';
import type { Logger } from '../platform/log.js';
import { Informer } from '../platform/store/informer.js';
import type { ResourceStore } from '../platform/store/types.js';
import { API_KEY_COMPONENT, API_KEY_LABELS } from './auth/api-keys.js';

/**
 * The API's caches: every read is served from here, never a round trip to the store per request
 * (DESIGN.md §4). Writes go to the store and are observed here at once.
 */
export class ReadModel {
  readonly apiKeys: Informer<Secret>;
  readonly organizations: Informer<Organization>;
  readonly agentComputers: Informer<AgentComputer>;

  constructor(store: ResourceStore, options: { controlNamespace: string; logger: Logger }) {
    const logger = options.logger;
    this.apiKeys = new Informer(store, SecretType, {
      logger,
      namespace: options.controlNamespace,
      labelSelector: `${API_KEY_LABELS.component}=${API_KEY_COMPONENT}`,
    });
    this.organizations = new Informer(store, OrganizationType, { logger });
    this.agentComputers = new Informer(store, AgentComputerType, { logger });
  }

  async start(): Promise<void> {
    await Promise.all([this.apiKeys.start(), this.organizations.start(), this.agentComputers.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.apiKeys.stop(), this.organizations.stop(), this.agentComputers.stop()]);
  }
}
