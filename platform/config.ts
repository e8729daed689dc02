import { z } from 'zod';
import { WorkspacePoolSpecSchema } from '../crds/workspace-pool/types.js';
import { EgressRuleSchema } from '../crds/egress.js';
import { DEFAULT_EGRESS_ALLOW } from './egress-defaults.js';
import { ModelProviderSchema } from './model-gateway/providers.js';
import {
  DnsServersSetting,
  EgressAllowSetting,
  NodeSelectorSchema,
  TolerationSchema,
  jsonSetting,
} from './workload-placement.js';
import { DEFAULT_MAX_RESULT_BYTES } from './lake-protocol.js';
import { FileRootsSetting } from './lake-config/file-roots.js';
import type { ListenSettings } from './listen.js';
import { DownloadRedirectSetting } from './objectstore/download-redirect.js';

const port = z.coerce.number().int().min(0).max(65535);

/** A Go duration setting (`90s`, `1h30m`) with its default, which the error message shows as the example. */
const durationSetting = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((text) => /^(\d+(ns|us|ms|s|m|h))+$/.test(text), `must be a duration such as ${fallback}`);

/** Every environment variable Agentry reads, parsed once at start-up (docs/configuration.md#settings lists them). */
export const ConfigSchema = z.object({
  AGENTRY_HOST: z.string().min(1).default('127.0.0.1'),
  AGENTRY_PORT: port.default(8080),
  /** Base URL clients reach the API at, used in `url` fields; defaults to http://HOST:PORT. */
  AGENTRY_PUBLIC_URL: z.url().optional(),
  AGENTRY_DATA_DIR: z.string().min(1).default('./data'),
  /** Makes this the bootstrap key of org `default` instead of a generated one (for scripts). */
  AGENTRY_API_KEY: z.string().min(16).optional(),
  /** Namespace of the control plane: API keys and signing keys live here. */
  AGENTRY_NAMESPACE: z.string().min(1).default('agentry-system'),
  AGENTRY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `embedded` keeps resources in AGENTRY_DATA_DIR; `kubernetes` uses KUBECONFIG or the in-cluster account. */
  AGENTRY_STORE: z.enum(['embedded', 'kubernetes']).default('embedded'),
  KUBECONFIG: z.string().optional(),
  /** Operator: where agent computers run unless their spec says (`agentry serve` always uses process). */
  AGENTRY_DEFAULT_RUNTIME: z.enum(['kubevirt', 'pod', 'process']).default('pod'),
  /**
   * Operator: the warm pool of every organization that sets none (a WorkspacePool spec as JSON, e.g.
   * `{"minReady":2}`): a pool named `default` in each organization's namespace. Unset or `null`: none.
   */
  AGENTRY_DEFAULT_WORKSPACE_POOL: jsonSetting(WorkspacePoolSpecSchema.nullable(), 'null'),
  /** Operator: the runtimes it may use, comma separated. */
  AGENTRY_RUNTIMES: z
    .string()
    .default('pod,kubevirt')
    .transform((value) => value.split(',').map((runtime) => runtime.trim()))
    .pipe(z.array(z.enum(['kubevirt', 'pod'])).min(1)),
  /** Operator: image of the runner (pods) or of the VM disk (kubevirt) when the spec names none. */
  AGENTRY_RUNNER_IMAGE: z.string().min(1).default('ghcr.io/agentry-dev/agentry:0.1.0'),
  AGENTRY_WORKLOAD_CPU: z.string().default('2'),
  AGENTRY_WORKLOAD_MEMORY: z.string().default('4Gi'),
  AGENTRY_WORKLOAD_DISK: z.string().default('20Gi'),
  AGENTRY_STORAGE_CLASS: z.string().min(1).optional(),
  /**
   * Operator, kubevirt: how CDI fetches a VM disk image from a registry. `pod`: CDI's importer pod
   * downloads it. `node`: the kubelet pulls it like any container image (the node's image cache and
   * pull credentials; an image present only on the nodes works too).
   */
  AGENTRY_VM_DISK_PULL_METHOD: z.enum(['pod', 'node']).default('pod'),
  /** Operator: labels a node must carry to run workloads, as a JSON object (e.g. dedicated nodes). */
  AGENTRY_WORKLOAD_NODE_SELECTOR: jsonSetting(NodeSelectorSchema, '{}'),
  /** Operator: tolerations of workload pods and VMs, as a JSON array of core/v1 Tolerations. */
  AGENTRY_WORKLOAD_TOLERATIONS: jsonSetting(z.array(TolerationSchema), '[]'),
  /**
   * Operator: destinations workloads may reach beyond the default egress (the internet, not the
   * cluster's private ranges): comma separated `CIDR[:port]`, e.g. an in-cluster S3 store.
   */
  AGENTRY_WORKLOAD_EGRESS_ALLOW: EgressAllowSetting,
  /** Operator: DNS servers workloads may query besides kube-system's pods, comma separated IPv4 CIDRs (a node-local resolver). */
  AGENTRY_WORKLOAD_DNS_SERVERS: DnsServersSetting,
  /** API and operator: executor definitions (YAML or JSON `{ executors: [...] }`) replacing or adding to the built-ins. */
  AGENTRY_EXECUTORS_FILE: z.string().min(1).optional(),
  /** Operator: the skills catalog (YAML or JSON `{ skills: [...] }`): slug → git repository or directory. */
  AGENTRY_SKILLS_FILE: z.string().min(1).optional(),
  /** Operator: how long soft-deleted tasks are kept before they are removed (a Go duration). */
  AGENTRY_DELETED_TASK_RETENTION: durationSetting('168h'),
  /** API: the bound of POST /v1/context-lake/sql, a paused lake's start included (docs/api.md#limits: 3 minutes). */
  AGENTRY_LAKE_SQL_TIMEOUT: durationSetting('3m'),
  /** API: how long a web-page session (the cookie of a sign-in) lasts unless its API key expires first. */
  AGENTRY_UI_SESSION_TTL: durationSetting('12h'),
  /**
   * API: preview URLs get a host of their own, `https://<token>.<domain>/` (needs wildcard DNS and a
   * wildcard TLS certificate for the domain pointing at the API); unset: `<public URL>/previews/<token>/`.
   */
  AGENTRY_PREVIEW_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,190}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
      'must be a lowercase DNS name such as preview.example.com',
    )
    .optional(),
  /** API: how long a request to a preview URL waits for its hibernated workspace to wake before a 503. */
  AGENTRY_PREVIEW_WAKE_TIMEOUT: durationSetting('60s'),
  /**
   * API and operator: whether webhooks may target loopback, private and link-local addresses, and
   * plain http (organizations can also allow it for themselves). Unset: `agentry serve` allows it
   * (one machine, receivers on localhost), `agentry api` and `agentry operator` do not.
   */
  AGENTRY_WEBHOOK_PRIVATE_TARGETS: z.enum(['true', 'false']).optional(),
  /**
   * Operator: delays between webhook delivery attempts, comma separated Go durations. Default: the
   * Standard Webhooks example schedule (5s, 5m, 30m, 2h, 5h, 10h, 10h after the first attempt).
   */
  AGENTRY_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .refine(
      (text) => text === undefined || /^(\d+(ms|s|m|h))+(,(\d+(ms|s|m|h))+)*$/.test(text.replace(/\s+/g, '')),
      'must be comma separated durations such as 5s,5m,30m',
    ),
  /** API and operator: where uploaded files live; `filesystem` is `<AGENTRY_DATA_DIR>/objects`. */
  AGENTRY_OBJECT_STORE: z.enum(['filesystem', 's3']).default('filesystem'),
  /** With `s3`: the bucket (required), region and, for S3-compatible services, endpoint and path style. Credentials come from the AWS SDK's default chain. */
  AGENTRY_S3_BUCKET: z.string().min(1).optional(),
  AGENTRY_S3_REGION: z.string().min(1).default('us-east-1'),
  AGENTRY_S3_ENDPOINT: z.url().optional(),
  AGENTRY_S3_FORCE_PATH_STYLE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * API: artifact downloads answer 307 to a presigned URL of the S3 store, so the bytes never pass
   * through the API: `auto` when clients can reach the endpoint (objectstore/download-redirect.ts),
   * `always`, `never`. The directory store always streams.
   */
  AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT: DownloadRedirectSetting,
  /** API: the largest signed upload (POST /files, artifact upload URLs), in bytes; docs/api.md#limits says 512 MiB. */
  AGENTRY_SIGNED_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(512 * 1024 * 1024),
  /** API: file bytes of one multipart artifact upload (POST /workspaces/:id/artifacts); docs/api.md#limits says 32 MiB. */
  AGENTRY_ARTIFACT_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(32 * 1024 * 1024),
  /** Operator: image of the lake server (pods) or of its VM disk (kubevirt). */
  AGENTRY_LAKE_IMAGE: z.string().min(1).default('ghcr.io/agentry-dev/agentry-lake:0.1.0'),
  /** API and lake: dataset connectors this installation allows, comma separated (`file` reads the server's disk: embedded only). */
  AGENTRY_LAKE_CONNECTORS: z
    .string()
    .default('s3,https')
    .transform((value) => value.split(',').map((connector) => connector.trim()))
    .pipe(z.array(z.enum(['s3', 'https', 'file'])).min(1)),
  /**
   * API and lake: directories `file://` datasets may read below, comma separated (symbolic links
   * followed); none by default. `agentry serve` adds each organization's `<data dir>/lake-files/<namespace>/`.
   */
  AGENTRY_LAKE_FILE_ROOTS: FileRootsSetting,
  /** Operator: lakes' downloads (s3_endpoint, https datasets) may reach loopback and private addresses. Default: yes on one machine (`agentry serve`), no in a cluster. */
  AGENTRY_LAKE_PRIVATE_TARGETS: z.enum(['true', 'false']).optional(),
  /** API and lake: the largest SQL answer in bytes (its rows as JSON); a larger one is a 413. */
  AGENTRY_LAKE_MAX_RESULT_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MAX_RESULT_BYTES),
  /** API and operator: S3 bucket notifications for context lakes arrive through one SQS queue per organization. */
  AGENTRY_SQS_ENABLED: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  AGENTRY_SQS_REGION: z.string().min(1).default('us-east-1'),
  /** For SQS-compatible services (and tests); credentials come from the AWS SDK's default chain. */
  AGENTRY_SQS_ENDPOINT: z.url().optional(),
  /**
   * AWS accounts whose buckets may send events to the queues (the policy's aws:SourceAccount),
   * comma separated; empty: any account's bucket (events still count only when bucket and key
   * match a dataset).
   */
  AGENTRY_SQS_SOURCE_ACCOUNTS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((account) => account.trim())
        .filter((account) => account !== ''),
    )
    .pipe(z.array(z.string().regex(/^\d{12}$/, 'must be 12-digit AWS account ids'))),
  /** Queue names are `<prefix><organization namespace>`. */
  AGENTRY_SQS_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,40}$/)
    .default('agentry-lake-'),
  /**
   * `agentry serve`: how workspace runners and lake servers (the `process` runtime) are confined.
   * `bubblewrap` (default): each sees only its own directory and read-only system files, and the
   * runtime refuses to start one where bwrap cannot run. `none`: unconfined, single-tenant only.
   */
  AGENTRY_PROCESS_ISOLATION: z.enum(['bubblewrap', 'none']).default('bubblewrap'),
  /** `agentry serve`: extra directories confined processes may read (agent CLIs under /opt...), comma separated absolute paths. */
  AGENTRY_PROCESS_READ_ONLY_PATHS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((path) => path.trim())
        .filter((path) => path !== ''),
    )
    .pipe(z.array(z.string().startsWith('/', 'must be absolute paths'))),
  /**
   * `agentry api` on the Kubernetes store: how many processes serve the port (node:cluster). `1`: one
   * process; `auto`: the CPUs this container may use (cgroup v2 cpu.max, else the machine's).
   * `agentry serve` is always one process.
   */
  AGENTRY_API_WORKERS: z
    .string()
    .trim()
    .regex(/^(auto|[1-9]\d{0,2})$/, 'must be auto or a number of processes from 1 to 999')
    .default('1')
    .transform((value) => (value === 'auto' ? ('auto' as const) : Number(value))),
  /**
   * Operator: the API server's address as workspaces reach it (the model gateway's base URLs and
   * the lake client's AGENTRY_LAKE_URL are built from it; the workspace NetworkPolicy allows the
   * API pods). The chart sets the in-cluster Service; `agentry serve` its own loopback URL.
   * Unset on Kubernetes: no gateway routes (executors get their keys as before), no lake client.
   */
  AGENTRY_INTERNAL_URL: z.url().optional(),
  /**
   * API and operator: `enabled` (default): executors with model routes reach their providers through
   * the model gateway and never see a key; `disabled`: keys are resolved into their environment.
   */
  AGENTRY_MODEL_GATEWAY: z.enum(['enabled', 'disabled']).default('enabled'),
  /** API: where the model gateway forwards, JSON `{ "anthropic": "https://...", ... }`; omitted providers: their public endpoints. */
  AGENTRY_MODEL_UPSTREAMS: jsonSetting(z.partialRecord(ModelProviderSchema, z.url()), '{}'),
  /** API: the model price table (YAML or JSON `{ prices: [...] }`, docs/model-gateway.md#prices); unset: the built-in table. */
  AGENTRY_MODEL_PRICES_FILE: z.string().min(1).optional(),
  /**
   * Operator: the egress proxy's address as workspaces reach it (`http://host:port`); executors get
   * it as HTTPS_PROXY/HTTP_PROXY with their prompt token. The chart sets its Service; `agentry
   * serve` its own. Unset on Kubernetes: no proxy (and the NetworkPolicy's IP-range egress).
   */
  AGENTRY_EGRESS_PROXY_URL: z.url().optional(),
  /** `agentry egress-proxy` and `agentry serve`: where the egress proxy listens. */
  AGENTRY_EGRESS_PROXY_PORT: port.default(3128),
  /**
   * Egress proxy: destinations every workspace may reach, JSON `[{ "host": "github.com", "ports": [443] }]`;
   * organizations and workspaces add to it (spec.egress). Default: docs/egress.md#defaults.
   */
  AGENTRY_EGRESS_ALLOW: jsonSetting(z.array(EgressRuleSchema).max(500), JSON.stringify(DEFAULT_EGRESS_ALLOW)),
  /** Egress proxy: also allow loopback and private addresses (tests, the embedded default); never metadata. */
  AGENTRY_EGRESS_PRIVATE_TARGETS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** Operator: /metrics, /healthz and /readyz listen here. */
  AGENTRY_METRICS_PORT: port.default(8081),
  /** Operator: only the holder of the Lease reconciles; turn off only with a single replica. */
  AGENTRY_LEADER_ELECTION: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
});
export type Config = z.infer<typeof ConfigSchema>;
export type ProcessIsolation = Config['AGENTRY_PROCESS_ISOLATION'];
/** How many API processes to run: a count, or `auto` (the CPUs available). */
export type ApiWorkers = Config['AGENTRY_API_WORKERS'];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Every bad setting on one line, `invalid <what>: NAME: problem; NAME: problem`. Zod's messages
 * never quote the value, so a malformed secret does not end up on stderr.
 */
export function settingsError(what: string, error: z.ZodError): ConfigError {
  const problems = error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  return new ConfigError(`invalid ${what}: ${problems.join('; ')}`);
}

/** Parses the environment; a bad value stops start-up with every problem named. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) throw settingsError('configuration', parsed.error);
  return parsed.data;
}

export const publicUrlOf = (
  config: Pick<Config, 'AGENTRY_PUBLIC_URL' | 'AGENTRY_HOST' | 'AGENTRY_PORT'>,
): string =>
  (config.AGENTRY_PUBLIC_URL ?? `http://${config.AGENTRY_HOST}:${config.AGENTRY_PORT}`).replace(/\/+$/, '');

/** Where the API server listens, and the settings that say so. */
export const apiListenSettings = (config: Pick<Config, 'AGENTRY_HOST' | 'AGENTRY_PORT'>): ListenSettings => ({
  host: config.AGENTRY_HOST,
  port: config.AGENTRY_PORT,
  hostSetting: 'AGENTRY_HOST',
  portSetting: 'AGENTRY_PORT',
});

/** The upload limits of the API server (docs/api.md#limits, each configurable). */
export const artifactLimitsOf = (
  config: Pick<Config, 'AGENTRY_SIGNED_UPLOAD_MAX_BYTES' | 'AGENTRY_ARTIFACT_UPLOAD_MAX_BYTES'>,
): { signedUploadBytes: number; uploadRequestBytes: number } => ({
  signedUploadBytes: config.AGENTRY_SIGNED_UPLOAD_MAX_BYTES,
  uploadRequestBytes: config.AGENTRY_ARTIFACT_UPLOAD_MAX_BYTES,
});
