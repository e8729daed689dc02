import { AgentComputerType, OrganizationType, TaskType, organizationOfNamespace } from '../crds/index.js';
import type { AgentComputer, Organization, Task } from '../crds/index.js';
import type { Logger } from '../platform/log.js';
import { Informer } from '../platform/store/informer.js';
import type { ResourceStore } from '../platform/store/types.js';

/**
 * What the proxy reads on every connection, kept current by list + watch like the API's read
 * model: the Task (is the prompt still running?), the Organization and the AgentComputer (their
 * egress rules). A Task the cache has not seen yet (created a moment ago) is read from the store.
 */
export class EgressCaches {
  readonly tasks: Informer<Task>;
  readonly organizations: Informer<Organization>;
  readonly agentComputers: Informer<AgentComputer>;

  constructor(
    private readonly store: ResourceStore,
    logger: Logger,
  ) {
    this.tasks = new Informer(store, TaskType, { logger });
    this.organizations = new Informer(store, OrganizationType, { logger });
    this.agentComputers = new Informer(store, AgentComputerType, { logger });
  }

  async start(): Promise<void> {
    await Promise.all([this.tasks.start(), this.organizations.start(), this.agentComputers.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.tasks.stop(), this.organizations.stop(), this.agentComputers.stop()]);
  }

  async task(namespace: string, name: string): Promise<Task | undefined> {
    return this.tasks.get(namespace, name) ?? (await this.store.get(TaskType, namespace, name));
  }

  /** The Organization whose namespace this is (a token names the namespace, not the organization). */
  organizationOf(namespace: string): Organization | undefined {
    return organizationOfNamespace(this.organizations.list(), namespace);
  }

  agentComputer(namespace: string, name: string): AgentComputer | undefined {
    return this.agentComputers.get(namespace, name);
  }
}
