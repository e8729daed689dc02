// What the chart tests share: helm (built by the harness from the Go module proxy) against the
// test cluster, and SubjectAccessReviews that ask the real API server what an account may do.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { spawnAgentry, stopChild } from '../support/spawn-cli.js';
import { run } from './harness/tools.js';
import { kubectl, testCluster } from './support.js';

export const CHART = 'charts/agentry';
export const PROFILES = ['kubevirt', 'pod', 'minimal'] as const;
export const profileValues = (profile: (typeof PROFILES)[number]): string =>
  `${CHART}/values-${profile}.yaml`;

/** Runs the harness's helm with the test cluster's kubeconfig and caches of its own. */
export async function helm(args: string[]): Promise<string> {
  const cluster = testCluster();
  const home = join(cluster.workdir, 'helm');
  await mkdir(home, { recursive: true });
  return run('helm', args, {
    env: {
      ...process.env,
      PATH: `${cluster.toolsPath}:${process.env.PATH ?? ''}`,
      KUBECONFIG: cluster.kubeconfig,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
    },
    timeoutMs: 300_000,
  });
}

/** helm's failure as text (run() rejects with helm's stderr in the message). */
export async function helmFailure(args: string[]): Promise<string> {
  try {
    await helm(args);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error(`helm ${args.join(' ')} succeeded; a failure was expected`);
}

const RenderedSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});
export type Rendered = z.infer<typeof RenderedSchema>;

/** The objects `helm template` printed. */
export function renderedObjects(manifest: string): Rendered[] {
  return parseAllDocuments(manifest)
    .map((doc) => doc.toJS() as unknown)
    .filter((object) => object !== null)
    .map((object) => RenderedSchema.parse(object));
}

/** One question for the API server's authorizer: may `user` do `verb` on `resource`? */
export interface AccessQuestion {
  verb: string;
  resource: string;
  group?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** Asks the real authorizer every question at once (SubjectAccessReview); answers in order. */
export async function mayDo(user: string, questions: readonly AccessQuestion[]): Promise<boolean[]> {
  const reviews = questions.map((q) => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user,
      groups: [
        'system:serviceaccounts',
        `system:serviceaccounts:${user.split(':')[2] ?? ''}`,
        'system:authenticated',
      ],
      resourceAttributes: {
        verb: q.verb,
        resource: q.resource,
        group: q.group ?? '',
        ...(q.subresource === undefined ? {} : { subresource: q.subresource }),
        ...(q.namespace === undefined ? {} : { namespace: q.namespace }),
        ...(q.name === undefined ? {} : { name: q.name }),
      },
    },
  }));
  // kubectl prints one line per created review, in order: the authorizer's answer.
  const out = await kubectl(
    ['create', '-o', 'jsonpath={.status.allowed}{"\\n"}', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: reviews }),
  );
  const lines = out.trim().split('\n');
  if (lines.length !== questions.length)
    throw new Error(`${questions.length} reviews, ${lines.length} answers: ${out}`);
  return lines.map((line) => line.trim() === 'true');
}

/** `verb resource[/subresource][ name] in namespace` for failure messages. */
export const describeQuestion = (q: AccessQuestion): string =>
  `${q.verb} ${q.group === undefined || q.group === '' ? '' : `${q.group}/`}${q.resource}${
    q.subresource === undefined ? '' : `/${q.subresource}`
  }${q.name === undefined ? '' : ` ${q.name}`} in ${q.namespace ?? '(cluster)'}`;

/**
 * A kubeconfig that authenticates as a service account with a token the API server issues for it
 * (TokenRequest), so a program run with it has exactly the account's permissions.
 */
export async function accountKubeconfig(namespace: string, account: string): Promise<string> {
  const token = (await kubectl(['create', 'token', account, '-n', namespace, '--duration', '1h'])).trim();
  const admin = new KubeConfig();
  admin.loadFromFile(testCluster().kubeconfig);
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig names no current cluster');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: account, token }],
    contexts: [{ name: account, cluster: cluster.name, user: account }],
    currentContext: account,
  });
  const path = join(testCluster().workdir, `${namespace}-${account}.kubeconfig`);
  await writeFile(path, config.exportConfig(), { mode: 0o600 });
  return path;
}

/** A started `agentry` command and the tail of what it printed (for the message when it does not stop). */
interface Started {
  command: string;
  tail: string;
}

const children = new Map<ChildProcessWithoutNullStreams, Started>();
const TAIL_CHARS = 4_000;
const STOP_DEADLINE_MS = 45_000;

/**
 * `agentry <args>` from source as a child process, stopped by `stopAll`. Its output is read all the
 * time: a pipe nobody reads fills at 64 KiB, and Node's writes to a pipe block, so a chatty operator
 * (another test's objects on the shared cluster) would hang at its next log line.
 */
export function startAgentry(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  const child = spawnAgentry(args, env);
  const started: Started = { command: `agentry ${args.join(' ')}`, tail: '' };
  const keep = (chunk: Buffer) => {
    started.tail = (started.tail + chunk.toString()).slice(-TAIL_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.set(child, started);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM, then the exit, within a deadline: a command that does not stop fails the test, named, with its last output. */
async function stopWithin(child: ChildProcessWithoutNullStreams, started: Started): Promise<void> {
  const deadline = new AbortController();
  const late = delay(STOP_DEADLINE_MS, 'late' as const, { signal: deadline.signal }).catch(
    () => 'stopped' as const,
  );
  const outcome = await Promise.race([stopChild(child).then(() => 'stopped' as const), late]);
  deadline.abort();
  if (outcome === 'stopped') return;
  child.kill('SIGKILL');
  throw new Error(
    `${started.command} did not exit within ${STOP_DEADLINE_MS} ms of SIGTERM; its last output: ${started.tail}`,
  );
}

/** Stops (SIGTERM) every child `startAgentry` started and waits for each to exit. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(([child, started]) => stopWithin(child, started)));
}
