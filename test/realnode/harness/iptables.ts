// iptables bookkeeping: the node's own fence rules, and removing whatever the node's components
// (kube-proxy, kube-router, the kubelet) added, without touching rules other programs own.
import { run } from '../../cluster/harness/tools.js';

export type Family = 'ipv4' | 'ipv6';
const SAVE: Record<Family, string> = { ipv4: 'iptables-save', ipv6: 'ip6tables-save' };
const RESTORE: Record<Family, string> = { ipv4: 'iptables-restore', ipv6: 'ip6tables-restore' };

/** Marks the harness's own rules, so that teardown finds exactly them. */
export const RULE_COMMENT = 'agentry-realnode';

/** Chains of the Kubernetes node components: kube-proxy, kube-router and kubelet all prefix KUBE-. */
const isNodeComponentChain = (chain: string): boolean => chain.startsWith('KUBE-');

interface SavedTable {
  table: string;
  chains: string[];
  /** Rules as iptables-save prints them (`-A CHAIN …`), reusable verbatim by iptables-restore. */
  rules: string[];
}

function parseSave(text: string): SavedTable[] {
  const tables: SavedTable[] = [];
  let current: SavedTable | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      current = { table: line.slice(1).trim(), chains: [], rules: [] };
      tables.push(current);
    } else if (current !== undefined && line.startsWith(':')) {
      current.chains.push(line.slice(1).split(' ')[0] ?? '');
    } else if (current !== undefined && line.startsWith('-A ')) {
      current.rules.push(line);
    }
  }
  return tables;
}

async function save(family: Family): Promise<SavedTable[]> {
  return parseSave(await run(SAVE[family], []).catch(() => ''));
}

/** `table chain` for every chain that exists now. */
export async function snapshotChains(family: Family): Promise<string[]> {
  return (await save(family)).flatMap(({ table, chains }) => chains.map((chain) => `${table} ${chain}`));
}

/** The rules the harness added or the node components left, as `table: rule` lines. */
export async function leftoverRules(family: Family, baselineChains: string[]): Promise<string[]> {
  return (await save(family)).flatMap(({ table, chains, rules }) => {
    const added = new Set(
      chains.filter((chain) => isNodeComponentChain(chain) && !baselineChains.includes(`${table} ${chain}`)),
    );
    return [
      ...rules.filter((rule) => isOurs(rule, added)).map((rule) => `${table}: ${rule}`),
      ...[...added].map((chain) => `${table}: chain ${chain}`),
    ];
  });
}

function isOurs(rule: string, addedChains: Set<string>): boolean {
  if (rule.includes(`--comment ${RULE_COMMENT}`)) return true;
  const chain = rule.split(' ')[1] ?? '';
  if (addedChains.has(chain)) return true;
  const target = /\s-[jg] (\S+)/.exec(rule)?.[1];
  return target !== undefined && addedChains.has(target);
}

/**
 * Deletes the harness's rules and every KUBE- chain (with the rules jumping to it) that was not there
 * before the node: what `kube-proxy --cleanup` and kube-router's cleanup miss, and the kubelet's canaries.
 */
export async function removeAddedRules(family: Family, baselineChains: string[]): Promise<void> {
  const script: string[] = [];
  for (const { table, chains, rules } of await save(family)) {
    const added = chains.filter(
      (chain) => isNodeComponentChain(chain) && !baselineChains.includes(`${table} ${chain}`),
    );
    const addedSet = new Set(added);
    const deletions = rules
      .filter((rule) => !addedSet.has(rule.split(' ')[1] ?? '') && isOurs(rule, addedSet))
      .map((rule) => `-D ${rule.slice(3)}`);
    if (deletions.length === 0 && added.length === 0) continue;
    script.push(
      `*${table}`,
      ...deletions,
      ...added.map((chain) => `-F ${chain}`),
      ...added.map((chain) => `-X ${chain}`),
      'COMMIT',
    );
  }
  if (script.length > 0) await run(RESTORE[family], ['--noflush'], { input: `${script.join('\n')}\n` });
}

/** Inserts (or deletes, with `-D`) one of the harness's own rules, tagged with RULE_COMMENT. */
export async function ownRule(
  action: '-I' | '-D',
  table: string,
  chain: string,
  spec: string[],
): Promise<void> {
  await run('iptables', ['-t', table, action, chain, ...spec, '-m', 'comment', '--comment', RULE_COMMENT]);
}
