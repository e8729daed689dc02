import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { decodeObject, isStatusObject, ListSchema, VersionSchema } from './kubernetes/codec.js';
import { errorFromNetwork, errorFromResponse, isObjectNotFound, isSuccess } from './kubernetes/errors.js';
import {
  collectionPath,
  createPath,
  describeCollection,
  describeObject,
  objectPath,
} from './kubernetes/paths.js';
import { DEFAULT_MAX_CONNECTIONS } from './kubernetes/connection-pools.js';
import { KubeConfigTransport } from './kubernetes/transport.js';
import type { KubeRequest, KubeResponse, KubeTransport } from './kubernetes/transport.js';
import { openWatch } from './kubernetes/watch.js';
import { retryOnConflict } from './retry-on-conflict.js';
import { isStoreError, StoreError } from './types.js';
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  ResourceStore,
  StatusWriteOptions,
  Watch,
  WatchEvent,
  WatchOptions,
} from './types.js';

export { KubeConfigTransport } from './kubernetes/transport.js';
export type { KubeRequest, KubeResponse, KubeStream, KubeTransport } from './kubernetes/transport.js';

export interface KubernetesStoreOptions {
  /** How long a request other than a watch may go without an answer; default 30 000 ms. */
  requestTimeoutMs?: number;
  /**
   * Asks the API server to end every watch after this many seconds (`done` then rejects with
   * Unavailable and the caller resumes). Default: the server's own limit, 30 to 60 minutes.
   */
  watchTimeoutSeconds?: number;
  /**
   * Requests other than watches in flight at once, at most (more queue); default 32. Over HTTP/2
   * they share one connection; over HTTP/1.1 (an http or proxied server, or one without HTTP/2)
   * each has a kept-alive connection. Each watch has a connection of its own besides.
   */
  maxConnections?: number;
  /**
   * Requests over HTTP/2, one connection per API server (default false: HTTP/1.1, a kept-alive
   * connection per request in flight). The API server's stores use it: a claim and its task, written
   * at once, then share a connection instead of one waiting for a TLS handshake. The operator's do
   * not: measured on the real node, its dispatches waited 30-40 ms longer on one connection
   * (docs/benchmarks.md). Any value of DISABLE_HTTP2 in the environment turns it off, as for client-go.
   */
  http2?: boolean;
  /** Objects per page when listing; default 500. */
  listPageSize?: number;
  /** Attempts of an unconditional replaceStatus that keeps meeting conflicts; default 5. */
  statusAttempts?: number;
}

const DEFAULTS = { requestTimeoutMs: 30_000, listPageSize: 500, statusAttempts: 5 };

interface Page<T> {
  items: T[];
  resourceVersion: string;
  continueToken: string | undefined;
}

/** A ResourceStore on a Kubernetes API server: paths come from the ResourceType, so no discovery. */
export class KubernetesStore implements ResourceStore {
  private readonly watches = new Set<AbortController>();
  private closed = false;

  private constructor(
    private readonly transport: KubeTransport,
    private readonly options: KubernetesStoreOptions,
  ) {}

  /** A store on the kubeconfig's current context (TLS, client certificates, tokens, exec plugins). */
  static fromKubeConfig(kubeConfig: KubeConfig, options: KubernetesStoreOptions = {}): KubernetesStore {
    if (kubeConfig.getCurrentCluster() === null) {
      throw new StoreError('Invalid', 'the kubeconfig has no current context with a cluster');
    }
    const transport = new KubeConfigTransport(kubeConfig, {
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      maxConnections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      http2: options.http2 === true && (process.env['DISABLE_HTTP2'] ?? '') === '',
    });
    return new KubernetesStore(transport, options);
  }

  /** A store from $KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  static fromDefault(options: KubernetesStoreOptions = {}): KubernetesStore {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    return KubernetesStore.fromKubeConfig(kubeConfig, options);
  }

  /** A store on any transport: for tests, or a transport of your own. */
  static fromTransport(transport: KubeTransport, options: KubernetesStoreOptions = {}): KubernetesStore {
    return new KubernetesStore(transport, options);
  }

  async get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    const context = `reading ${describeObject(type, namespace, name)}`;
    const response = await this.send({ method: 'GET', path: objectPath(type, namespace, name) }, context);
    // A 404 about another name means the type (or its API group) is not served: that is an error.
    if (response.status === 404 && isObjectNotFound(response.body, name)) return undefined;
    return decodeObject(type, this.expectSuccess(response, context), context);
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<ListResult<T>> {
    try {
      return await this.listPages(type, options, this.options.listPageSize ?? DEFAULTS.listPageSize);
    } catch (err) {
      // The continue token of a long paged list can expire; one unpaged list is always consistent.
      if (isStoreError(err, 'Expired')) return this.listPages(type, options, 0);
      throw err;
    }
  }

  async watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch> {
    const label = describeCollection(type, options.namespace);
    if (this.closed) throw new StoreError('Unavailable', `watching ${label}: the store is closed`);
    const { controller, release } = this.track(options.signal);
    const request = {
      type,
      path: collectionPath(type, options.namespace),
      options,
      timeoutSeconds: this.options.watchTimeoutSeconds,
      label,
      onEvent,
    };
    try {
      const opened = await openWatch(this.transport, request, controller);
      const done = opened.done.finally(release);
      done.catch(() => undefined); // callers may attach late: a rejection is not unhandled meanwhile
      return { done };
    } catch (err) {
      release();
      throw err;
    }
  }

  async create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    const { namespace, name } = object.metadata;
    const context = `creating ${describeObject(type, namespace, name)}`;
    const path = createPath(type, namespace, name);
    // Sent as given: a wrong apiVersion or kind is the API server's to refuse (as Invalid).
    const body = withoutVersion(object);
    const response = await this.send({ method: 'POST', path, body }, context);
    return decodeObject(type, this.expectSuccess(response, context), context);
  }

  async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    const { namespace, name, resourceVersion } = object.metadata;
    const context = `replacing ${describeObject(type, namespace, name)}`;
    if (resourceVersion === undefined || resourceVersion === '') {
      throw new StoreError('Invalid', `${context}: metadata.resourceVersion is required`);
    }
    return this.put(type, object, undefined, context);
  }

  async replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options: StatusWriteOptions = {},
  ): Promise<T> {
    const { namespace, name } = object.metadata;
    const context = `replacing the status of ${describeObject(type, namespace, name)}`;
    if (!type.hasStatusSubresource) {
      throw new StoreError('Invalid', `${context}: ${type.kind} has no status subresource`);
    }
    if (options.resourceVersion !== undefined) {
      return this.put(type, withVersion(object, options.resourceVersion), 'status', context);
    }
    return this.putStatusUnconditionally(type, object, context);
  }

  async delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): Promise<T | undefined> {
    const context = `deleting ${describeObject(type, namespace, name)}`;
    const path = objectPath(type, namespace, name);
    const response = await this.send({ method: 'DELETE', path, body: deleteBody(options) }, context);
    const body = this.expectSuccess(response, context);
    // The answer is a Status once the object is gone, else the object: as left while finalizers
    // remain (it has a deletionTimestamp), or as it was just before it went.
    if (isStatusObject(body)) return undefined;
    const object = decodeObject(type, body, context);
    return object.metadata.deletionTimestamp === undefined ? undefined : object;
  }

  close(): Promise<void> {
    this.closed = true;
    for (const controller of this.watches) controller.abort();
    this.watches.clear();
    this.transport.close?.();
    return Promise.resolve();
  }

  /** A controller for one watch, aborted by the caller's signal or by close(); release() forgets it. */
  private track(signal: AbortSignal): { controller: AbortController; release: () => void } {
    const controller = new AbortController();
    const stop = (): void => {
      controller.abort();
    };
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) controller.abort();
    this.watches.add(controller);
    const release = (): void => {
      signal.removeEventListener('abort', stop);
      this.watches.delete(controller);
    };
    return { controller, release };
  }

  private async listPages<T extends KubeObject>(
    type: ResourceType<T>,
    options: ListOptions,
    pageSize: number,
  ): Promise<ListResult<T>> {
    const items: T[] = [];
    let page = await this.listPage(type, options, pageSize, undefined);
    items.push(...page.items);
    while (page.continueToken !== undefined) {
      page = await this.listPage(type, options, pageSize, page.continueToken);
      items.push(...page.items);
    }
    return { items, resourceVersion: page.resourceVersion };
  }

  private async listPage<T extends KubeObject>(
    type: ResourceType<T>,
    options: ListOptions,
    pageSize: number,
    continueToken: string | undefined,
  ): Promise<Page<T>> {
    const context = `listing ${describeCollection(type, options.namespace)}`;
    const query = listQuery(options, pageSize, continueToken);
    const response = await this.send(
      { method: 'GET', path: collectionPath(type, options.namespace), query },
      context,
    );
    const parsed = ListSchema.safeParse(this.expectSuccess(response, context));
    if (!parsed.success) {
      throw new StoreError('Invalid', `${context}: the API server sent a malformed list`, {
        cause: parsed.error,
      });
    }
    const { metadata, items } = parsed.data;
    const resourceVersion = metadata?.resourceVersion ?? '';
    const next = metadata?.continue;
    return {
      items: (items ?? []).map((item) => decodeObject(type, item, context)),
      resourceVersion,
      continueToken: next === undefined || next === '' ? undefined : next,
    };
  }

  /** PUT of the object or its status subresource, with the object's resourceVersion. */
  private async put<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    subresource: 'status' | undefined,
    context: string,
  ): Promise<T> {
    const path = objectPath(type, object.metadata.namespace, object.metadata.name, subresource);
    const response = await this.send({ method: 'PUT', path, body: object }, context);
    return decodeObject(type, this.expectSuccess(response, context), context);
  }

  /**
   * A status write whatever the current version: the API server requires a resourceVersion on a PUT of
   * a custom resource, so try the object's own, and on a conflict read the current one and try again.
   */
  private async putStatusUnconditionally<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    context: string,
  ): Promise<T> {
    const own = object.metadata.resourceVersion;
    return retryOnConflict(async (tryNumber) => {
      const version =
        tryNumber === 1 && own !== undefined && own !== ''
          ? own
          : await this.currentVersion(type, object, context);
      return this.put(type, withVersion(object, version), 'status', context);
    }, this.options.statusAttempts ?? DEFAULTS.statusAttempts);
  }

  private async currentVersion<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    context: string,
  ): Promise<string> {
    const { namespace, name } = object.metadata;
    const response = await this.send({ method: 'GET', path: objectPath(type, namespace, name) }, context);
    const parsed = VersionSchema.safeParse(this.expectSuccess(response, context));
    if (parsed.success) return parsed.data.metadata.resourceVersion;
    throw new StoreError('Invalid', `${context}: the API server sent an object without a resourceVersion`, {
      cause: parsed.error,
    });
  }

  private async send(request: KubeRequest, context: string): Promise<KubeResponse> {
    try {
      return await this.transport.request(request);
    } catch (err) {
      throw errorFromNetwork(err, context);
    }
  }

  /** The body of a successful answer; any other answer becomes its StoreError. */
  private expectSuccess(response: KubeResponse, context: string): unknown {
    if (!isSuccess(response.status)) throw errorFromResponse(response.status, response.body, context);
    return response.body;
  }
}

/** The API server refuses (500) a create carrying a resourceVersion; like the embedded store, drop it. */
function withoutVersion<T extends KubeObject>(object: T): T {
  const metadata = { ...object.metadata };
  delete metadata.resourceVersion;
  return { ...object, metadata };
}

const withVersion = <T extends KubeObject>(object: T, resourceVersion: string): T => ({
  ...object,
  metadata: { ...object.metadata, resourceVersion },
});

/** The DeleteOptions body: background cascading, and preconditions when given. */
export function deleteBody(options: DeleteOptions): Record<string, unknown> {
  const preconditions = {
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.resourceVersion === undefined ? {} : { resourceVersion: options.resourceVersion }),
  };
  const body: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy: 'Background',
  };
  if (Object.keys(preconditions).length > 0) body.preconditions = preconditions;
  return body;
}

/** The query of one list page; the label selector is passed as written. */
export function listQuery(
  options: ListOptions,
  pageSize: number,
  continueToken: string | undefined,
): URLSearchParams {
  const query = new URLSearchParams();
  if (options.labelSelector !== undefined && options.labelSelector !== '')
    query.set('labelSelector', options.labelSelector);
  if (pageSize > 0) query.set('limit', String(pageSize));
  if (continueToken !== undefined) query.set('continue', continueToken);
  return query;
}
