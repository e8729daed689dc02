// What the KubernetesStore unit tests share: a Probe kind, Status answers, and a scripted
// transport in place of the API server.
import { z } from 'zod';
import { defineCustomResource } from '../../crds/resource.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import type {
  KubeRequest,
  KubeResponse,
  KubeStream,
  KubeTransport,
} from '../../platform/store/kubernetes.js';
import { StoreError } from '../../platform/store/types.js';

export const ProbeType = defineCustomResource({
  group: 'agentry.dev',
  version: 'v1alpha1',
  kind: 'Probe',
  plural: 'probes',
  singular: 'probe',
  namespaced: true,
  shortNames: [],
  description: 'test kind',
  spec: z.object({ size: z.number().int(), note: z.string().optional() }),
  status: z.object({ phase: z.string() }),
  printerColumns: [],
});
export type Probe = z.infer<typeof ProbeType.schema>;

export const ClusterProbeType = { ...ProbeType, kind: 'Probe', plural: 'clusterprobes', namespaced: false };

export const probe = (name: string, extra: Partial<Probe['metadata']> = {}): Probe => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Probe',
  metadata: { name, namespace: 'ns-a', ...extra },
  spec: { size: 1 },
});

export const status = (code: number, reason: string, message: string, name?: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
  details: name === undefined ? {} : { name, group: 'agentry.dev', kind: 'probes' },
});

/** Answers requests from a script and records them. */
export class FakeTransport implements KubeTransport {
  readonly requests: KubeRequest[] = [];
  readonly streams: { request: KubeRequest; signal: AbortSignal }[] = [];
  constructor(
    private readonly answers: KubeResponse[] = [],
    private readonly opened: KubeStream[] = [],
  ) {}

  request(request: KubeRequest): Promise<KubeResponse> {
    this.requests.push(request);
    const answer = this.answers.shift();
    return answer === undefined
      ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'))
      : Promise.resolve(answer);
  }

  stream(request: KubeRequest, signal: AbortSignal): Promise<KubeStream> {
    this.streams.push({ request, signal });
    const next = this.opened.shift();
    return next === undefined ? Promise.reject(new Error('no stream scripted')) : Promise.resolve(next);
  }
}

export const storeWith = (...answers: KubeResponse[]) => {
  const transport = new FakeTransport(answers);
  return { transport, store: KubernetesStore.fromTransport(transport) };
};

export const caught = async (promise: Promise<unknown>): Promise<StoreError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError');
};
