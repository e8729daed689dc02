// Argo CD health checks for Agentry's kinds: the Lua in deploy/argocd/health/ is the one source;
// this renders the two copies shipped in the Helm chart (a patch for argocd-cm, and values for the
// argo-cd Helm chart), which test/unit/argocd-health-copies.test.ts keeps from drifting.
//
// Run: npm run argocd-health   (rewrites the copies)
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import {
  AGENTRY_RESOURCE_TYPES,
  AgentComputerType,
  ContextLakeType,
  GROUP,
  OrganizationType,
  TaskType,
  WebhookType,
  WorkspacePoolType,
} from '../crds/index.js';

export const HEALTH_DIR = 'deploy/argocd/health';
export const CHART_COPIES = {
  argocdCmPatch: 'charts/agentry/argocd/argocd-cm-patch.yaml',
  argoCdValues: 'charts/agentry/argocd/argo-cd-values.yaml',
} as const;

/** Each kind's Lua file, named like the kind's folder in crds/, api/ and operator/. */
const HEALTH_FILES: ReadonlyMap<string, string> = new Map([
  [OrganizationType.kind, 'organization.lua'],
  [AgentComputerType.kind, 'agent-computer.lua'],
  [TaskType.kind, 'task.lua'],
  [ContextLakeType.kind, 'context-lake.lua'],
  [WebhookType.kind, 'webhook.lua'],
  [WorkspacePoolType.kind, 'workspace-pool.lua'],
]);

/** What runs before each kind's check: helpers they share (Argo CD runs each check on its own). */
const COMMON_FILE = 'common.lua';

export const healthFiles = (): string[] => [COMMON_FILE, ...HEALTH_FILES.values()];

/** A kind's check as Argo CD gets it: the shared helpers, then the kind's own Lua. */
export async function healthScript(kind: string): Promise<string> {
  const file = HEALTH_FILES.get(kind);
  if (file === undefined) throw new Error(`no Argo CD health check for kind ${kind}`);
  const common = await readFile(join(HEALTH_DIR, COMMON_FILE), 'utf8');
  return `${common}\n${await readFile(join(HEALTH_DIR, file), 'utf8')}`;
}

/** argocd-cm's key for a kind's health check. */
export const healthKey = (kind: string): string => `resource.customizations.health.${GROUP}_${kind}`;

/** Every kind's argocd-cm key and Lua, in the order the CRDs are written. */
export async function healthCustomizations(): Promise<Record<string, string>> {
  const entries = await Promise.all(
    AGENTRY_RESOURCE_TYPES.map(async ({ kind }) => [healthKey(kind), await healthScript(kind)] as const),
  );
  return Object.fromEntries(entries);
}

const header = (use: string): string =>
  `# Argo CD health checks for Agentry's kinds (docs/install.md#gitops). Generated from\n` +
  `# ${HEALTH_DIR}/*.lua by \`npm run argocd-health\`: edit the Lua, not this file.\n${use}`;

/** The two chart copies, by path. */
export async function renderChartCopies(): Promise<Record<string, string>> {
  const data = await healthCustomizations();
  const yaml = (value: unknown): string => stringify(value, { blockQuote: 'literal', lineWidth: 0 });
  return {
    [CHART_COPIES.argocdCmPatch]:
      header('#   kubectl -n argocd patch configmap argocd-cm --patch-file argocd-cm-patch.yaml\n') +
      yaml({ data }),
    [CHART_COPIES.argoCdValues]:
      header('#   helm upgrade argocd argo/argo-cd -n argocd --reuse-values -f argo-cd-values.yaml\n') +
      yaml({ configs: { cm: data } }),
  };
}

async function main(): Promise<void> {
  for (const [path, text] of Object.entries(await renderChartCopies())) {
    await writeFile(path, text);
    process.stderr.write(`wrote ${path}\n`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
