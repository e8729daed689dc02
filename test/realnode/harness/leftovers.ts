// What a real node left behind, compared with the machine's baseline: empty after a good teardown.
import { access, readFile, readdir } from 'node:fs/promises';
import { z } from 'zod';
import { run } from '../../cluster/harness/tools.js';
import { mountsUnder } from './cleanup.js';
import { nftTables } from './host.js';
import { leftoverRules } from './iptables.js';
import { CONTROL_PLANE_IP, CONTROL_PLANE_LINK, NODE_BRIDGE, POD_BRIDGE } from './layout.js';
import type { Baseline } from './layout.js';
import { isRunning, pidsWhere } from './processes.js';

const LinksSchema = z.array(
  z.object({ ifname: z.string(), linkinfo: z.object({ info_kind: z.string().optional() }).optional() }),
);

/** Names of veth interfaces on the host now. */
export async function veths(): Promise<string[]> {
  const links = LinksSchema.parse(JSON.parse(await run('ip', ['-j', '-d', 'link', 'show'])));
  return links.filter((link) => link.linkinfo?.info_kind === 'veth').map((link) => link.ifname);
}

async function networkLeftovers(workdir: string, vethsBefore: string[]): Promise<string[]> {
  const found: string[] = [];
  const links = LinksSchema.parse(JSON.parse(await run('ip', ['-j', 'link', 'show'])));
  for (const bridge of [NODE_BRIDGE, POD_BRIDGE]) {
    if (links.some((link) => link.ifname === bridge)) found.push(`bridge ${bridge}`);
  }
  if (links.some((link) => link.ifname === CONTROL_PLANE_LINK)) found.push(`link ${CONTROL_PLANE_LINK}`);
  for (const veth of await veths()) if (!vethsBefore.includes(veth)) found.push(`veth ${veth}`);
  const route = (await run('ip', ['route', 'show', `${CONTROL_PLANE_IP}/32`])).trim();
  if (route !== '') found.push(`route ${route}`);
  for (const mount of await mountsUnder([workdir])) found.push(`mount ${mount}`);
  return found;
}

async function firewallLeftovers(baseline: Baseline): Promise<string[]> {
  return [
    ...(await leftoverRules('ipv4', baseline.iptablesChains.ipv4)).map((rule) => `iptables ${rule}`),
    ...(await leftoverRules('ipv6', baseline.iptablesChains.ipv6)).map((rule) => `ip6tables ${rule}`),
    ...(await nftTables())
      .filter((table) => !baseline.nftTables.includes(table))
      .map((t) => `nft table ${t}`),
  ];
}

const normalized = (value: string): string => value.trim().split(/\s+/).join(' ');

async function hostLeftovers(baseline: Baseline): Promise<string[]> {
  const found: string[] = [];
  for (const [key, value] of Object.entries(baseline.sysctls)) {
    const now = normalized(await readFile(`/proc/sys/${key}`, 'utf8'));
    if (now !== normalized(value)) found.push(`sysctl ${key}=${now} (was ${value})`);
  }
  for (const [path, before] of Object.entries(baseline.hostPaths)) {
    const now = await readdir(path).then(
      (entries) => entries.sort(),
      () => null,
    );
    if (JSON.stringify(now) !== JSON.stringify(before))
      found.push(`host path ${path}: ${JSON.stringify(now)}`);
  }
  return found;
}

async function processLeftovers(workdir: string, pids: number[]): Promise<string[]> {
  const found: string[] = [];
  for (const pid of pids) if (await isRunning(pid)) found.push(`process ${pid}`);
  for (const pid of await pidsWhere((args) => args.some((arg) => arg.includes(workdir)))) {
    found.push(`process ${pid} using the workdir`);
  }
  const workdirLeft = await access(workdir).then(
    () => true,
    () => false,
  );
  if (workdirLeft) found.push(`workdir ${workdir}`);
  return found;
}

/**
 * One line per leftover: bridges, the control-plane host's veth and route, veths not there before,
 * mounts (the control-plane host's namespace among them), iptables rules and KUBE- chains,
 * nft tables, sysctls, host paths, processes, the workdir.
 */
export async function leftovers(
  baseline: Baseline,
  workdir: string,
  vethsBefore: string[],
  pids: number[],
): Promise<string[]> {
  return [
    ...(await networkLeftovers(workdir, vethsBefore)),
    ...(await firewallLeftovers(baseline)),
    ...(await hostLeftovers(baseline)),
    ...(await processLeftovers(workdir, pids)),
  ];
}
