import type { Dataset } from '../../crds/context-lake/types.js';
import {
  SECRET_PARAMS,
  connectorOf,
  parseDatasetSource,
  secretReferenceOf,
} from '../../platform/lake-config/dataset-source.js';
import { FILE_ROOTS_RULE, isBelowRoots, realRoots } from '../../platform/lake-config/file-roots.js';
import type { Connector } from '../../platform/lake-config/dataset-source.js';
import type { ErrorDetail } from '../errors.js';
import { joinPath } from './edit-config.js';
import type { ConfigEdit } from './edit-config.js';

export interface ValidationContext {
  /** The connectors this installation enables (AGENTRY_LAKE_CONNECTORS). */
  connectors: ReadonlySet<Connector>;
  /** Keys the lake's Secret holds now, plus those this write is about to add. */
  secretKeys: ReadonlySet<string>;
  /** False when the installation has no SQS: `notifications: true` cannot be honoured. */
  notificationsAvailable: boolean;
}

/** The Secret key a literal credential of a dataset is moved to (docs/api.md#context-lake). */
export const credentialKey = (dataset: string, param: string): string => `${dataset}.${param}`;

/** Keys that the literal credentials among these datasets will be stored under. */
export function literalCredentialKeys(datasets: readonly Dataset[]): string[] {
  return datasets.flatMap((dataset) =>
    Object.entries(dataset.params ?? {})
      .filter(([param, value]) => SECRET_PARAMS.has(param) && secretReferenceOf(value) === undefined)
      .map(([param]) => credentialKey(dataset.name, param)),
  );
}

/** `${secrets:...}` is for credentials only, and must name a key the lake's Secret holds. */
function secretReferenceIssues(dataset: Dataset, path: string, context: ValidationContext): ErrorDetail[] {
  const issues: ErrorDetail[] = [];
  for (const [param, value] of Object.entries(dataset.params ?? {})) {
    const key = secretReferenceOf(value);
    const where = joinPath(path, `params.${param}`);
    if (value.includes('${secrets:') && key === undefined)
      issues.push({ path: where, message: `${param} holds a malformed secret reference` });
    if (key === undefined) continue;
    if (!SECRET_PARAMS.has(param))
      issues.push({
        path: where,
        message: `secret references are only allowed in ${[...SECRET_PARAMS].join(', ')}`,
      });
    else if (!context.secretKeys.has(key))
      issues.push({ path: where, message: `${param} references the secret ${key}, which does not exist` });
  }
  return issues;
}

function datasetIssues(dataset: Dataset, path: string, context: ValidationContext): ErrorDetail[] {
  const parsed = parseDatasetSource(dataset, { connectors: context.connectors });
  const issues = parsed.ok
    ? []
    : parsed.issues.map((issue) => ({ path: joinPath(path, issue.path), message: issue.message }));
  issues.push(...secretReferenceIssues(dataset, path, context));
  if (dataset.notifications === true && !context.notificationsAvailable)
    issues.push({
      path: joinPath(path, 'notifications'),
      message: 'notifications need SQS, and this installation has no SQS configured',
    });
  return issues;
}

/** Names are unique across datasets and views; a clash is reported where the request made it. */
function nameIssues(edit: ConfigEdit): ErrorDetail[] {
  const counts = new Map<string, number>();
  for (const { name } of [...edit.config.datasets, ...edit.config.views])
    counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...edit.datasets, ...edit.views]
    .filter(({ item }) => (counts.get(item.name) ?? 0) > 1)
    .map(({ item, path }) => ({
      path: joinPath(path, 'name'),
      message: `the name ${item.name} is used more than once among datasets and views`,
    }));
}

/**
 * Everything a write must satisfy, checked on the configuration it would produce: names, and for
 * each dataset the request saved, its connector's rules and its secret references. Datasets the
 * request left alone were checked when they were saved.
 */
export function validateEdit(edit: ConfigEdit, context: ValidationContext): ErrorDetail[] {
  return [
    ...edit.issues,
    ...nameIssues(edit),
    ...edit.datasets.flatMap(({ item, path }) => datasetIssues(item, path, context)),
  ];
}

/**
 * Each file:// dataset the request saved must lie below the organization's file roots, symbolic
 * links followed (the lake checks again when it loads). A malformed or disabled file:// source
 * was already reported by validateEdit.
 */
export async function fileRootIssues(
  edit: ConfigEdit,
  context: Pick<ValidationContext, 'connectors'> & { fileRoots: readonly string[] },
): Promise<ErrorDetail[]> {
  if (!context.connectors.has('file')) return [];
  const files = edit.datasets.filter(({ item }) => connectorOf(item.from) === 'file');
  if (files.length === 0) return [];
  const roots = await realRoots(context.fileRoots);
  const issues: ErrorDetail[] = [];
  for (const { item, path } of files) {
    const filePath = item.from.slice('file://'.length);
    if (filePath.startsWith('/') && !(await isBelowRoots(filePath, roots)))
      issues.push({ path: joinPath(path, 'from'), message: FILE_ROOTS_RULE });
  }
  return issues;
}
