import {
  AgentComputerType,
  ContextLakeType,
  OrganizationType,
  SecretType,
  TaskType,
  WebhookType,
} from '../crds/index.js';
import type {
  AgentComputer,
  ContextLake,
  KubeObject,
  Organization,
  Secret,
  Task,
  Webhook,
} from '../crds/index.js';
import type { Logger } from '../platform/log.js';
import { Informer } from '../platform/store/informer.js';
import type { ResourceStore } from '../platform/store/types.js';
import { API_KEY_COMPONENT, API_KEY_LABELS } from './auth/api-keys.js';
import { IndexedInformer, bucketKey } from './list-index.js';
import type { Placement } from './list-index.js';
import { taskPlacement } from './task/list-index.js';
import { workspaceCreatedAt } from './agent-computer/present.js';
import { isAvailableMember } from './workspace-pool/members.js';
import { PreviewIndex } from './agent-computer/previews/preview-index.js';

const keyOf = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;
const objectKey = (object: KubeObject): string => keyOf(object.metadata.namespace, object.metadata.name);

/** Webhooks are listed per organization, those being deleted left out. */
const liveInOrganization = (object: KubeObject): Placement | undefined =>
  object.metadata.deletionTimestamp === undefined
    ? {
        createdAt: object.metadata.creationTimestamp ?? '',
        buckets: [organizationBucket(object.metadata.namespace ?? '')],
      }
    : undefined;

/** The list of one organization's live agent computers (or webhooks) in their index. */
export const organizationBucket = (namespace: string): string => bucketKey(namespace);

/** The list of one organization's available warm-pool members (what a claim chooses from). */
export const poolMembersBucket = (namespace: string): string => bucketKey(namespace, 'pool-members');

/**
 * Agent computers are listed per organization, those being deleted left out; an available pool
 * member is in its organization's pool list instead, which the REST API never pages. A claim moves
 * it to the organization's list, at the time of the claim (it is a new workspace to its claimer).
 */
const agentComputerPlacement = (ac: AgentComputer): Placement | undefined => {
  if (ac.metadata.deletionTimestamp !== undefined) return undefined;
  const namespace = ac.metadata.namespace ?? '';
  const bucket = isAvailableMember(ac) ? poolMembersBucket(namespace) : organizationBucket(namespace);
  return { createdAt: workspaceCreatedAt(ac), buckets: [bucket] };
};

/**
 * Wakes whoever waits on one object (an event stream waiting for its task to change). Keyed by
 * object, so a change costs one map lookup however many streams are open.
 */
class ChangeListeners {
  private readonly listeners = new Map<string, Set<() => void>>();

  add(key: string, listener: () => void): () => void {
    let set = this.listeners.get(key);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  notify(key: string): void {
    for (const listener of [...(this.listeners.get(key) ?? [])]) listener();
  }
}

/**
 * The API's caches: every read is served from here, never a round trip to the store per request
 * (docs/architecture.md#the-life-of-a-task). Writes go to the store and are observed here at once.
 */
export class ReadModel {
  readonly apiKeys: Informer<Secret>;
  readonly organizations: Informer<Organization>;
  /** Indexed per organization, newest first (list pages without a sort). */
  readonly agentComputers: IndexedInformer<AgentComputer>;
  /** Indexed per organization, audience and filter, newest first (api/task/list-index.ts). */
  readonly tasks: IndexedInformer<Task>;
  readonly webhooks: IndexedInformer<Webhook>;
  readonly contextLakes: Informer<ContextLake>;
  /** share id → task key, and back: GET /v1/share/:token finds its task without a scan. */
  private readonly taskByShare = new Map<string, string>();
  /** preview id → workspace: a preview URL finds its workspace without a scan. */
  readonly previews = new PreviewIndex();
  private readonly shareOfTask = new Map<string, string>();
  private readonly taskListeners = new ChangeListeners();
  private readonly workspaceListeners = new ChangeListeners();
  private readonly contextLakeListeners = new ChangeListeners();

  constructor(
    private readonly store: ResourceStore,
    options: { controlNamespace: string; logger: Logger },
  ) {
    const logger = options.logger;
    this.apiKeys = new Informer(store, SecretType, {
      logger,
      namespace: options.controlNamespace,
      labelSelector: `${API_KEY_LABELS.component}=${API_KEY_COMPONENT}`,
    });
    this.organizations = new Informer(store, OrganizationType, { logger });
    this.agentComputers = new IndexedInformer(
      store,
      AgentComputerType,
      {
        logger,
        onEvent: ({ type, object }) => {
          this.previews.update(object, type === 'DELETED');
          this.workspaceListeners.notify(objectKey(object));
        },
      },
      agentComputerPlacement,
    );
    this.tasks = new IndexedInformer(
      store,
      TaskType,
      {
        logger,
        onEvent: ({ object }) => {
          this.taskChanged(object.metadata.namespace, object.metadata.name);
        },
      },
      taskPlacement,
    );
    this.webhooks = new IndexedInformer(store, WebhookType, { logger }, liveInOrganization);
    this.contextLakes = new Informer(store, ContextLakeType, {
      logger,
      onEvent: ({ object }) => {
        this.contextLakeListeners.notify(objectKey(object));
      },
    });
  }

  async start(): Promise<void> {
    await Promise.all([
      this.apiKeys.start(),
      this.organizations.start(),
      this.agentComputers.start(),
      this.tasks.start(),
      this.webhooks.start(),
      this.contextLakes.start(),
    ]);
  }

  async stop(): Promise<void> {
    await Promise.all([
      this.apiKeys.stop(),
      this.organizations.stop(),
      this.agentComputers.stop(),
      this.tasks.stop(),
      this.webhooks.stop(),
      this.contextLakes.stop(),
    ]);
  }

  /**
   * Records a Task this process just wrote (like `Informer.observe`), keeping the share index and
   * the change listeners in step: a share link works, and a waiting stream wakes, at once.
   */
  observeTask(task: Task, deleted = false): void {
    this.tasks.observe(task, deleted);
    this.taskChanged(task.metadata.namespace, task.metadata.name);
  }

  /**
   * The task as cached or, on a miss, as stored. Another API replica may have created it a moment
   * ago, before this replica's watch delivered it: a client that creates a task and opens its
   * stream at once lands on any replica. A miss costs one GET; its answer is not cached (the watch
   * stays the one writer of the cache, so a deletion it already applied is never undone).
   */
  async taskReadThrough(namespace: string, name: string): Promise<Task | undefined> {
    return this.tasks.get(namespace, name) ?? (await this.store.get(TaskType, namespace, name));
  }

  /** The agent computer as cached or, on a miss, as stored (see taskReadThrough). */
  async agentComputerReadThrough(namespace: string, name: string): Promise<AgentComputer | undefined> {
    return (
      this.agentComputers.get(namespace, name) ?? (await this.store.get(AgentComputerType, namespace, name))
    );
  }

  /** The task a share id belongs to, as cached; the caller checks visibility and deletion. */
  taskByShareId(shareId: string): Task | undefined {
    const key = this.taskByShare.get(shareId);
    if (key === undefined) return undefined;
    const slash = key.indexOf('/');
    const task = this.tasks.get(key.slice(0, slash), key.slice(slash + 1));
    return task?.spec.shareId === shareId ? task : undefined;
  }

  /** Calls `listener` after every change of one task (its deletion included); returns the unsubscribe. */
  onTaskChange(namespace: string, name: string, listener: () => void): () => void {
    return this.taskListeners.add(keyOf(namespace, name), listener);
  }

  /** Calls `listener` after every change of one agent computer seen by the watch; returns the unsubscribe. */
  onWorkspaceChange(namespace: string, name: string, listener: () => void): () => void {
    return this.workspaceListeners.add(keyOf(namespace, name), listener);
  }

  /** Calls `listener` after every change of one context lake seen by the watch (POST /sql waits on it). */
  onContextLakeChange(namespace: string, name: string, listener: () => void): () => void {
    return this.contextLakeListeners.add(keyOf(namespace, name), listener);
  }

  /** Re-indexes one task from the cache (which already holds the change), then wakes its listeners. */
  private taskChanged(namespace: string | undefined, name: string): void {
    const key = keyOf(namespace, name);
    const previous = this.shareOfTask.get(key);
    const shareId = this.tasks.get(namespace, name)?.spec.shareId;
    if (previous !== shareId) {
      if (previous !== undefined && this.taskByShare.get(previous) === key) this.taskByShare.delete(previous);
      if (shareId === undefined) this.shareOfTask.delete(key);
      else {
        this.shareOfTask.set(key, shareId);
        this.taskByShare.set(shareId, key);
      }
    }
    this.taskListeners.notify(key);
  }
}
