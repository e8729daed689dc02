import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';

export interface FollowTarget {
  namespace: string;
  /** The task's name (its id, also the runner's task id). */
  name: string;
  endpoint: string;
  token: string;
  /** Events with a seq above this are of interest (the highest seq the Task status records). */
  after: number;
}

export interface TaskEventFollowersOptions {
  logger: Logger;
  /** A prompt of the task changed state (or the stream saw its first event): reconcile the task. */
  onProgress: (namespace: string, name: string) => void;
  /** Pause before reconnecting a dropped stream. Default 1 s. */
  reconnectDelayMs?: number;
}

interface Follower {
  endpoint: string;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * One live event stream per task with work in progress, from the runner to the operator. It only
 * wakes the Task reconciler when a prompt changes state; the reconciler reads the prompt's state from
 * the runner and records it, so a missed or duplicated event changes nothing (level-based), and after
 * an operator restart a follower simply starts again after the seq the Task status records.
 */
export class TaskEventFollowers {
  private readonly followers = new Map<string, Follower>();

  constructor(private readonly options: TaskEventFollowersOptions) {}

  /** Starts following, unless a follower for this task and endpoint already runs. */
  ensure(target: FollowTarget): void {
    const key = `${target.namespace}/${target.name}`;
    const current = this.followers.get(key);
    if (current !== undefined && current.endpoint === target.endpoint) return;
    current?.abort.abort();
    const abort = new AbortController();
    const follower: Follower = { endpoint: target.endpoint, abort, done: Promise.resolve() };
    follower.done = this.follow(target, abort.signal).finally(() => {
      if (this.followers.get(key) === follower) this.followers.delete(key);
    });
    this.followers.set(key, follower);
  }

  stop(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    this.followers.get(key)?.abort.abort();
    this.followers.delete(key);
  }

  following(namespace: string, name: string): boolean {
    return this.followers.has(`${namespace}/${name}`);
  }

  async stopAll(): Promise<void> {
    const all = [...this.followers.values()];
    this.followers.clear();
    for (const follower of all) follower.abort.abort();
    await Promise.all(all.map((follower) => follower.done));
  }

  private async follow(target: FollowTarget, signal: AbortSignal): Promise<void> {
    const client = new RunnerClient({ endpoint: target.endpoint, token: target.token });
    const logger = this.options.logger.child({ task: target.name, namespace: target.namespace });
    let after = target.after;
    let failures = 0;
    const onEvent = (event: TaskEvent): void => {
      after = event.seq;
      failures = 0;
      // `init` starts a prompt, a `status` event ends one: the transitions the Task records.
      if (event.eventType === 'status' || event.eventType === 'init')
        this.options.onProgress(target.namespace, target.name);
    };
    while (!signal.aborted) {
      try {
        for await (const event of client.streamEvents(target.name, { after, signal })) onEvent(event);
      } catch (err) {
        failures += 1;
        logger.debug({ err, failures }, 'following the runner event stream failed; retrying');
        this.options.onProgress(target.namespace, target.name); // the reconciler decides whether to go on
      }
      const delay = Math.min((this.options.reconnectDelayMs ?? 1000) * 2 ** Math.min(failures, 4), 15_000);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }
}
