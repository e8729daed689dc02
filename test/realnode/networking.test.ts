// The pod network of the real node: pod IPs, ClusterIPs (kube-proxy), Service names (CoreDNS),
// the kube-apiserver through the `kubernetes` Service, and NetworkPolicy (kube-router).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  busyboxPod,
  clusterIpService,
  createNamespace,
  deleteNamespace,
  eventually,
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

/** An HTTP GET from inside a pod (the image's agentry-probe); undefined when the request fails. */
function getFromPod(namespace: string, pod: string, url: string): Promise<string | undefined> {
  return exec(namespace, pod, ['agentry-probe', '-timeout', '3s', url]).then(
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
    expect(await eventually('service name resolves', () => getFromPod(namespace, 'client', url))).toBe(
      'hello-web',
    );
  }, 60_000);

  it('reaches the kube-apiserver with its service-account token through the kubernetes Service from the real node', async () => {
    // In-cluster configuration: the Service's ClusterIP from the environment, verified against the
    // service-account CA (so the apiserver certificate must name that IP).
    const secrets = '/var/run/secrets/kubernetes.io/serviceaccount';
    const review = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const script = `exec agentry-probe -ca ${secrets}/ca.crt -token ${secrets}/token -post '${review}' https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/authentication.k8s.io/v1/selfsubjectreviews`;
    const body = await eventually('apiserver answers', () =>
      exec(namespace, 'client', ['sh', '-c', script]).catch(() => undefined),
    );
    expect(body).toContain(`"username":"system:serviceaccount:${namespace}:default"`);
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
    expect(await eventually('guarded answers', () => getFromPod(namespace, 'client', url))).toBe('guarded');
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
      (await getFromPod(namespace, 'client', url)) === undefined ? true : undefined,
    );
    // Still serving: the policy, not the server, stops the client.
    expect(await getFromPod(namespace, 'guarded', `http://127.0.0.1:${PORT}/`)).toBe('guarded');
  }, 120_000);
});
