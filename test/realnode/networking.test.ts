// The pod network of the real node: pod IPs, ClusterIPs (kube-proxy), Service names (CoreDNS),
// the kube-apiserver through the `kubernetes` Service, and NetworkPolicy (kube-router).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../cluster/support.js';
import {
  busyboxPod,
  clusterIpService,
  createNamespace,
  deleteNamespace,
  exec,
  kubectl,
  runPod,
} from './support.js';

const PORT = 8080;
/** A busybox httpd serving `body` on PORT. */
const webServer = (body: string): string =>
  `mkdir -p /www && echo ${body} > /www/index.html && exec httpd -f -p ${PORT} -h /www`;

async function httpBody(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return response.ok ? (await response.text()).trim() : undefined;
  } catch {
    return undefined;
  }
}

/** wget from inside a pod; undefined when the request fails. */
function wgetFromPod(namespace: string, pod: string, url: string): Promise<string | undefined> {
  return exec(namespace, pod, ['wget', '-q', '-T', '3', '-O', '-', url]).then(
    (body) => body.trim(),
    () => undefined,
  );
}

describe('networking on the real node', () => {
  let namespace: string;
  let serverIp: string;
  beforeAll(async () => {
    namespace = await createNamespace('net');
    serverIp = await runPod(busyboxPod('web', namespace, webServer('hello-web')), 'web', namespace);
    await kubectl(['apply', '-f', '-'], clusterIpService('web', namespace, 'web', PORT));
    await runPod(busyboxPod('client', namespace, 'exec sleep 3600'), 'client', namespace);
  }, 240_000);
  afterAll(async () => {
    await deleteNamespace(namespace);
  });

  it('answers the host from a pod on the real node on its pod IP', async () => {
    expect(await eventually('pod answers', () => httpBody(`http://${serverIp}:${PORT}/`))).toBe('hello-web');
  }, 60_000);

  it('answers the host through a ClusterIP Service of a pod on the real node', async () => {
    const clusterIp = (
      await kubectl(['get', 'service', 'web', '-n', namespace, '-o', 'jsonpath={.spec.clusterIP}'])
    ).trim();
    expect(clusterIp).not.toBe('');
    expect(await eventually('service answers', () => httpBody(`http://${clusterIp}:${PORT}/`))).toBe(
      'hello-web',
    );
  }, 60_000);

  it('resolves a Service name from inside a pod on the real node', async () => {
    const url = `http://web.${namespace}.svc:${PORT}/`;
    expect(await eventually('service name resolves', () => wgetFromPod(namespace, 'client', url))).toBe(
      'hello-web',
    );
  }, 60_000);

  it('reaches the kube-apiserver with its service-account token through the kubernetes Service from the real node', async () => {
    const review = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const script = [
      'TOKEN=$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)',
      `wget -q -T 5 --no-check-certificate -O - --header "Authorization: Bearer $TOKEN" --header "Content-Type: application/json" --post-data '${review}' https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    ].join('\n');
    const body = await eventually('apiserver answers', () =>
      exec(namespace, 'client', ['sh', '-c', script]).catch(() => undefined),
    );
    expect(body).toContain(`system:serviceaccount:${namespace}:default`);
    const host = await exec(namespace, 'client', ['sh', '-c', 'echo $KUBERNETES_SERVICE_HOST']);
    expect(host.trim()).toBe(
      (
        await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'])
      ).trim(),
    );
  }, 60_000);

  it('refuses a connection that worked once a NetworkPolicy denies ingress on the real node', async () => {
    const guardedIp = await runPod(
      busyboxPod('guarded', namespace, webServer('guarded')),
      'guarded',
      namespace,
    );
    const url = `http://${guardedIp}:${PORT}/`;
    expect(await eventually('guarded answers', () => wgetFromPod(namespace, 'client', url))).toBe('guarded');
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'deny-guarded', namespace },
        spec: { podSelector: { matchLabels: { app: 'guarded' } }, policyTypes: ['Ingress'] },
      }),
    );
    await eventually('policy enforced', async () =>
      (await wgetFromPod(namespace, 'client', url)) === undefined ? true : undefined,
    );
    // Still serving: the policy, not the server, stops the client.
    expect(
      (
        await exec(namespace, 'guarded', ['wget', '-q', '-T', '3', '-O', '-', `http://127.0.0.1:${PORT}/`])
      ).trim(),
    ).toBe('guarded');
  }, 120_000);
});
