import type { Dataset } from '../../crds/context-lake/types.js';
import { parseDuration } from '../duration.js';

/**
 * What a dataset's `from` and `params` mean (docs/api.md#context-lake), checked and parsed once: the API
 * server answers its 400s from the issues, the lake server loads from the parsed source.
 */

export type Connector = 's3' | 'https' | 'file';
export type FileFormat = 'parquet' | 'csv' | 'json';

export type S3Auth =
  { mode: 'public' } | { mode: 'iam_role' } | { mode: 'key'; accessKeyId: string; secretAccessKey: string };

export interface S3Source {
  connector: 's3';
  bucket: string;
  /** The object's key (a single object) or a prefix ending in `/` (every object under it). */
  key: string;
  isPrefix: boolean;
  format: FileFormat;
  auth: S3Auth;
  region?: string | undefined;
  /** S3-compatible services: `http(s)://host:port`; path-style addressing is used with it. */
  endpoint?: string | undefined;
  clientTimeoutMs?: number | undefined;
  hivePartitioning: boolean;
  notifications: boolean;
  checkIntervalMs?: number | undefined;
}

export interface HttpsSource {
  connector: 'https';
  url: string;
  format: FileFormat;
  clientTimeoutMs?: number | undefined;
  checkIntervalMs?: number | undefined;
}

export interface FileSource {
  connector: 'file';
  /** Absolute path of a file, or of a directory when it ends with `/`. */
  path: string;
  isDirectory: boolean;
  format: FileFormat;
  hivePartitioning: boolean;
  checkIntervalMs?: number | undefined;
}

export type DatasetSource = S3Source | HttpsSource | FileSource;

/** One problem, in the validation shape of docs/api.md#errors (`path` like `params.s3_key`). */
export interface DatasetIssue {
  path: string;
  message: string;
}

export type ParsedDataset = { ok: true; source: DatasetSource } | { ok: false; issues: DatasetIssue[] };

/** Params whose values are credentials: stored in the lake's Secret, shown as `${secrets:<key>}`. */
export const SECRET_PARAMS: ReadonlySet<string> = new Set(['s3_key', 's3_secret']);

const SECRET_REFERENCE = /^\$\{secrets:([A-Za-z0-9_.-]{1,253})\}$/;

/** The Secret key a `${secrets:<key>}` value names, or undefined for a literal. */
export function secretReferenceOf(value: string): string | undefined {
  return SECRET_REFERENCE.exec(value)?.[1];
}

export const secretReference = (key: string): string => `\${secrets:${key}}`;

/**
 * The param that makes the lake compare a dataset's source with what it holds on a timer, for
 * sources that send no notifications (a Go duration, at least MIN_REFRESH_CHECK_INTERVAL_MS). It
 * changes when data is checked, not what data is: it is not part of a dataset's definition.
 */
export const REFRESH_CHECK_INTERVAL = 'refresh_check_interval';
export const MIN_REFRESH_CHECK_INTERVAL_MS = 10_000;

const PARAMS_OF: Record<Connector, ReadonlySet<string>> = {
  s3: new Set([
    's3_auth',
    's3_key',
    's3_secret',
    's3_region',
    's3_endpoint',
    'allow_http',
    'path',
    'file_format',
    'client_timeout',
    'hive_partitioning_enabled',
    REFRESH_CHECK_INTERVAL,
  ]),
  https: new Set(['file_format', 'client_timeout', REFRESH_CHECK_INTERVAL]),
  file: new Set(['file_format', 'hive_partitioning_enabled', REFRESH_CHECK_INTERVAL]),
};

const FORMAT_BY_EXTENSION: Record<string, FileFormat> = {
  parquet: 'parquet',
  csv: 'csv',
  tsv: 'csv',
  json: 'json',
  jsonl: 'json',
  ndjson: 'json',
};

/** The connector a `from` URI names, or undefined. */
export function connectorOf(from: string): Connector | undefined {
  if (from.startsWith('s3://')) return 's3';
  if (from.startsWith('https://')) return 'https';
  if (from.startsWith('file://')) return 'file';
  return undefined;
}

function formatFromName(name: string): FileFormat | undefined {
  const base = name.replace(/\.(gz|zst)$/i, '');
  const dot = base.lastIndexOf('.');
  return dot < 0 ? undefined : FORMAT_BY_EXTENSION[base.slice(dot + 1).toLowerCase()];
}

/** A Go duration (`30s`, `1m30s`) in milliseconds, or undefined when malformed. */
function durationMs(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

class Issues {
  readonly list: DatasetIssue[] = [];
  add(path: string, message: string): void {
    this.list.push({ path, message });
  }
}

function booleanParam(params: Record<string, string>, name: string, issues: Issues): boolean {
  const value = params[name];
  if (value === undefined) return false;
  if (value !== 'true' && value !== 'false')
    issues.add(`params.${name}`, `${name} must be "true" or "false"`);
  return value === 'true';
}

function formatParam(params: Record<string, string>, name: string, issues: Issues): FileFormat | undefined {
  const value = params.file_format;
  if (value !== undefined) {
    if (value === 'parquet' || value === 'csv' || value === 'json') return value;
    issues.add('params.file_format', 'file_format must be one of parquet, csv, json');
    return undefined;
  }
  const inferred = formatFromName(name);
  if (inferred === undefined)
    issues.add(
      'params.file_format',
      'file_format is required when the name does not end in .parquet, .csv or .json (one of parquet, csv, json)',
    );
  return inferred;
}

function timeoutParam(params: Record<string, string>, issues: Issues): number | undefined {
  const value = params.client_timeout;
  if (value === undefined) return undefined;
  const ms = durationMs(value);
  if (ms === undefined || ms === 0)
    issues.add('params.client_timeout', 'client_timeout must be a duration such as 30s');
  return ms;
}

function checkIntervalParam(params: Record<string, string>, issues: Issues): number | undefined {
  const value = params[REFRESH_CHECK_INTERVAL];
  if (value === undefined) return undefined;
  const ms = durationMs(value);
  if (ms === undefined || ms < MIN_REFRESH_CHECK_INTERVAL_MS)
    issues.add(
      `params.${REFRESH_CHECK_INTERVAL}`,
      `${REFRESH_CHECK_INTERVAL} must be a duration of at least 10s, such as 5m`,
    );
  return ms;
}

function parseS3Location(
  from: string,
  params: Record<string, string>,
  issues: Issues,
): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.*)$/.exec(from);
  if (match?.[1] === undefined) {
    issues.add('from', 'from must be s3://bucket/key or s3://bucket/prefix/ with a valid bucket name');
    return undefined;
  }
  let key = match[2] ?? '';
  const path = params.path;
  if (path !== undefined) {
    if (path.startsWith('/') || path.split('/').includes('..'))
      issues.add('params.path', 'path must be a relative key under from, without ..');
    key = `${key}${key === '' || key.endsWith('/') ? '' : '/'}${path}`;
  }
  return { bucket: match[1], key };
}

function parseS3Auth(params: Record<string, string>, issues: Issues): S3Auth | undefined {
  const mode = params.s3_auth ?? (params.s3_key !== undefined ? 'key' : 'public');
  if (mode === 'key') {
    if (params.s3_key === undefined) issues.add('params.s3_key', 's3_key is required when s3_auth is key');
    if (params.s3_secret === undefined)
      issues.add('params.s3_secret', 's3_secret is required when s3_auth is key');
    return { mode: 'key', accessKeyId: params.s3_key ?? '', secretAccessKey: params.s3_secret ?? '' };
  }
  if (mode === 'public' || mode === 'iam_role') {
    for (const name of ['s3_key', 's3_secret'])
      if (params[name] !== undefined)
        issues.add(`params.${name}`, `${name} is only allowed when s3_auth is key`);
    return { mode };
  }
  issues.add('params.s3_auth', 's3_auth must be one of public, key, iam_role');
  return undefined;
}

function checkS3Endpoint(params: Record<string, string>, allowHttp: boolean, issues: Issues): void {
  const endpoint = params.s3_endpoint;
  if (endpoint === undefined) return;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    issues.add('params.s3_endpoint', 's3_endpoint must be a URL such as https://s3.example.com');
    return;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    issues.add('params.s3_endpoint', 's3_endpoint must be an http or https URL');
  if (url.protocol === 'http:' && !allowHttp)
    issues.add('params.allow_http', 'allow_http must be "true" to use an http:// s3_endpoint');
}

function parseS3(dataset: Dataset, params: Record<string, string>, issues: Issues): S3Source | undefined {
  const location = parseS3Location(dataset.from, params, issues);
  const isPrefix = location === undefined || location.key === '' || location.key.endsWith('/');
  // A malformed location says nothing about the format: report only the location then.
  const format =
    location === undefined ? undefined : formatParam(params, isPrefix ? '' : location.key, issues);
  const auth = parseS3Auth(params, issues);
  const allowHttp = booleanParam(params, 'allow_http', issues);
  checkS3Endpoint(params, allowHttp, issues);
  const region = params.s3_region;
  if (region !== undefined && !/^[a-z0-9-]{1,63}$/.test(region))
    issues.add('params.s3_region', 's3_region must be a region name such as us-east-1');
  const clientTimeoutMs = timeoutParam(params, issues);
  const hivePartitioning = booleanParam(params, 'hive_partitioning_enabled', issues);
  const checkIntervalMs = checkIntervalParam(params, issues);
  if (location === undefined || format === undefined || auth === undefined) return undefined;
  return {
    connector: 's3',
    ...location,
    isPrefix,
    format,
    auth,
    region,
    endpoint: params.s3_endpoint,
    clientTimeoutMs,
    hivePartitioning,
    notifications: dataset.notifications === true,
    checkIntervalMs,
  };
}

function parseHttps(
  dataset: Dataset,
  params: Record<string, string>,
  issues: Issues,
): HttpsSource | undefined {
  let url: URL;
  try {
    url = new URL(dataset.from);
  } catch {
    issues.add('from', 'from must be a valid https:// URL');
    return undefined;
  }
  const format = formatParam(params, url.pathname, issues);
  const clientTimeoutMs = timeoutParam(params, issues);
  const checkIntervalMs = checkIntervalParam(params, issues);
  return format === undefined
    ? undefined
    : { connector: 'https', url: url.toString(), format, clientTimeoutMs, checkIntervalMs };
}

function parseFile(dataset: Dataset, params: Record<string, string>, issues: Issues): FileSource | undefined {
  const path = dataset.from.slice('file://'.length);
  if (!path.startsWith('/') || path.split('/').includes('..')) {
    issues.add('from', 'from must be file:///absolute/path without ..');
    return undefined;
  }
  const isDirectory = path.endsWith('/');
  const format = formatParam(params, isDirectory ? '' : path, issues);
  const hivePartitioning = booleanParam(params, 'hive_partitioning_enabled', issues);
  const checkIntervalMs = checkIntervalParam(params, issues);
  return format === undefined
    ? undefined
    : { connector: 'file', path, isDirectory, format, hivePartitioning, checkIntervalMs };
}

/**
 * Checks a dataset and says what it loads. `connectors` are those this installation enables
 * (`file` only in the embedded default). Secret references (`${secrets:...}`) count as present
 * values here; the lake server receives them resolved.
 */
export function parseDatasetSource(
  dataset: Dataset,
  options: { connectors: ReadonlySet<Connector> },
): ParsedDataset {
  const issues = new Issues();
  const connector = connectorOf(dataset.from);
  if (connector === undefined) {
    issues.add('from', 'from must start with s3://, https:// or file://');
    return { ok: false, issues: issues.list };
  }
  if (!options.connectors.has(connector)) {
    issues.add('from', `the ${connector} connector is not enabled on this installation`);
    return { ok: false, issues: issues.list };
  }
  const params = dataset.params ?? {};
  const allowed = PARAMS_OF[connector];
  for (const name of Object.keys(params))
    if (!allowed.has(name))
      issues.add(
        `params.${name}`,
        `unknown param ${name} for the ${connector} connector (allowed: ${[...allowed].join(', ')})`,
      );
  if (dataset.notifications === true && connector !== 's3')
    issues.add('notifications', 'notifications can only be enabled on s3 datasets');
  const source =
    connector === 's3'
      ? parseS3(dataset, params, issues)
      : connector === 'https'
        ? parseHttps(dataset, params, issues)
        : parseFile(dataset, params, issues);
  if (issues.list.length > 0 || source === undefined) return { ok: false, issues: issues.list };
  return { ok: true, source };
}
