// The node's network: the node-address bridge, the pods' CNI bridge, and a fence between the pod
// network and the machine's uplink.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { run } from '../../cluster/harness/tools.js';
import { setSysctl } from './host.js';
import { ownRule } from './iptables.js';
import {
  CNI_NETWORK,
  CONTROL_PLANE_IP,
  NODE_BRIDGE,
  NODE_IP,
  POD_BRIDGE,
  POD_CIDR,
  SERVICE_CIDR,
} from './layout.js';
import type { NodePaths } from './layout.js';

/**
 * The uplink fence: nothing from or to the pod and service ranges or the control-plane host crosses
 * the uplink interface.
 */
const fenceRules = (uplink: string): string[][] =>
  [POD_CIDR, SERVICE_CIDR, `${CONTROL_PLANE_IP}/32`].flatMap((cidr) => [
    ['-s', cidr, '-o', uplink, '-j', 'DROP'],
    ['-d', cidr, '-i', uplink, '-j', 'DROP'],
  ]);

/** Creates the node bridge, fences the uplink, turns forwarding on and writes the CNI conflist. */
export async function setUpNetwork(paths: NodePaths, uplink: string): Promise<void> {
  await run('ip', ['link', 'add', NODE_BRIDGE, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${NODE_IP}/32`, 'dev', NODE_BRIDGE]);
  await run('ip', ['link', 'set', NODE_BRIDGE, 'up']);
  // The host reaches ClusterIPs through kube-proxy's OUTPUT DNAT, which needs a route to start from:
  // without this one, an unserved ClusterIP would leave through the default route (the uplink).
  await run('ip', ['route', 'add', SERVICE_CIDR, 'dev', NODE_BRIDGE, 'src', NODE_IP]);
  for (const spec of fenceRules(uplink)) await ownRule('-I', 'mangle', 'FORWARD', spec);
  await setSysctl('net/ipv4/ip_forward', '1');
  await setSysctl('net/bridge/bridge-nf-call-iptables', '1').catch(() => undefined);
  await mkdir(paths.cniConfDir, { recursive: true });
  await mkdir(paths.cniIpamDir, { recursive: true });
  await writeFile(join(paths.cniConfDir, '10-agentry.conflist'), JSON.stringify(cniConflist(paths), null, 2));
}

function cniConflist(paths: NodePaths): unknown {
  return {
    cniVersion: '1.0.0',
    name: CNI_NETWORK,
    plugins: [
      {
        type: 'bridge',
        bridge: POD_BRIDGE,
        isGateway: true,
        // No masquerade: pod traffic must never leave through the uplink under the host's address.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: POD_CIDR }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: paths.cniIpamDir,
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

const LinksSchema = z.array(z.object({ ifname: z.string() }));

/** Interfaces now attached to the pod bridge (the host ends of the pods' veths). */
export async function podVeths(): Promise<string[]> {
  const out = await run('ip', ['-j', 'link', 'show', 'master', POD_BRIDGE]).catch(() => '[]');
  return LinksSchema.parse(JSON.parse(out === '' ? '[]' : out)).map((link) => link.ifname);
}

export async function linkExists(name: string): Promise<boolean> {
  return run('ip', ['link', 'show', name]).then(
    () => true,
    () => false,
  );
}

/** Deletes veths, both bridges (their routes go with them) and the fence rules; idempotent. */
export async function tearDownNetwork(uplink: string): Promise<void> {
  for (const veth of await podVeths()) await run('ip', ['link', 'del', veth]).catch(() => undefined);
  for (const bridge of [POD_BRIDGE, NODE_BRIDGE]) {
    if (await linkExists(bridge)) await run('ip', ['link', 'del', bridge]);
  }
  for (const spec of fenceRules(uplink)) {
    // Delete every copy (a crashed setup may have inserted one twice).
    while (
      await ownRule('-D', 'mangle', 'FORWARD', spec).then(
        () => true,
        () => false,
      )
    );
  }
}
