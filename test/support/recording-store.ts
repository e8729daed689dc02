// A store that records the calls made through it (not watches: those are the caches' streams), and
// in how many sequential rounds: a round starts when a call begins while none is in flight.
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  StatusWriteOptions,
} from '../../platform/store/types.js';
import { DelegatingStore } from './delegating-store.js';

export interface RecordedCall {
  method: 'get' | 'list' | 'create' | 'replace' | 'replaceStatus' | 'delete';
  kind: string;
  /** The sequential round it began in, from 1. */
  round: number;
}

export class RecordingStore extends DelegatingStore {
  calls: RecordedCall[] = [];
  rounds = 0;
  private inFlight = 0;

  /** Forgets what was recorded (the caches' start, say). */
  reset(): void {
    this.calls = [];
    this.rounds = 0;
  }

  /** `method kind` of each call, in order: what a failing expectation prints. */
  summary(): string[] {
    return this.calls.map((call) => `${call.round}: ${call.method} ${call.kind}`);
  }

  override get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    return this.record('get', type, () => this.inner.get(type, namespace, name));
  }

  override list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<ListResult<T>> {
    return this.record('list', type, () => this.inner.list(type, options));
  }

  override create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.record('create', type, () => this.inner.create(type, object));
  }

  override replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.record('replace', type, () => this.inner.replace(type, object));
  }

  override replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    return this.record('replaceStatus', type, () => this.inner.replaceStatus(type, object, options));
  }

  override delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.record('delete', type, () => this.inner.delete(type, namespace, name, options));
  }

  private async record<R>(
    method: RecordedCall['method'],
    type: ResourceType,
    call: () => Promise<R>,
  ): Promise<R> {
    if (this.inFlight === 0) this.rounds += 1;
    this.calls.push({ method, kind: type.kind, round: this.rounds });
    this.inFlight += 1;
    try {
      return await call();
    } finally {
      this.inFlight -= 1;
    }
  }
}
