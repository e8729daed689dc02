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

const saveText = (family: Family): Promise<string> => run(SAVE[family], []).catch(() => '');

/** `table chain` for every chain that exists now. */
export async function snapshotChains(family: Family): Promise<string[]> {
  return parseSave(await saveText(family)).flatMap(({ table, chains }) =>
    chains.map((chain) => `${table} ${chain}`),
  );
}

/** In one table: the harness's rules and those in or jumping to new KUBE- chains, and those chains. */
export interface TableRemovals {
  table: string;
  /** `-D CHAIN …` lines for iptables-restore (rules outside the removed chains). */
  deletions: string[];
  chains: string[];
}

/**
 * What to remove, from `iptables-save` output and the chains that existed before the node. Rules of
 * other programs (chains the baseline had, or without our tag or a jump to a new KUBE- chain) stay.
 */
export function plannedRemovals(saved: string, baselineChains: string[]): TableRemovals[] {
  return parseSave(saved).flatMap(({ table, chains, rules }) => {
    const added = chains.filter(
      (chain) => isNodeComponentChain(chain) && !baselineChains.includes(`${table} ${chain}`),
    );
    const addedSet = new Set(added);
    const deletions = rules
      .filter((rule) => !addedSet.has(rule.split(' ')[1] ?? '') && isOurs(rule, addedSet))
      .map((rule) => `-D ${rule.slice(3)}`);
    return deletions.length === 0 && added.length === 0 ? [] : [{ table, deletions, chains: added }];
  });
}

function isOurs(rule: string, addedChains: Set<string>): boolean {
  if (rule.includes(`--comment ${RULE_COMMENT}`)) return true;
  const chain = rule.split(' ')[1] ?? '';
  if (addedChains.has(chain)) return true;
  const target = /\s-[jg] (\S+)/.exec(rule)?.[1];
  return target !== undefined && addedChains.has(target);
}

/** What teardown would still remove, as `table: …` lines (empty after a good teardown). */
export async function leftoverRules(family: Family, baselineChains: string[]): Promise<string[]> {
  return plannedRemovals(await saveText(family), baselineChains).flatMap(({ table, deletions, chains }) => [
    ...deletions.map((rule) => `${table}: ${rule}`),
    ...chains.map((chain) => `${table}: chain ${chain}`),
  ]);
}

/**
 * Deletes the harness's rules and every KUBE- chain (with the rules jumping to it) that was not there
 * before the node: what `kube-proxy --cleanup` and kube-router's cleanup miss, and the kubelet's canaries.
 */
export async function removeAddedRules(family: Family, baselineChains: string[]): Promise<void> {
  const script = plannedRemovals(await saveText(family), baselineChains).flatMap(
    ({ table, deletions, chains }) => [
      `*${table}`,
      ...deletions,
      ...chains.map((chain) => `-F ${chain}`),
      ...chains.map((chain) => `-X ${chain}`),
      'COMMIT',
    ],
  );
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
