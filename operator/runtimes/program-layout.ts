// How each workload program is laid out inside a pod or VM: its environment, where its disk is
// mounted, where it works. The pod and kubevirt runtimes stay one implementation each and read
// their program-specific parts from here.
import { POOL_LABEL } from '../../crds/index.js';
import { quantityValue } from './quantity.js';
import { workloadProgram } from './types.js';
import type { WorkloadObject, WorkloadProgram } from './types.js';

/** The runner's working directory, on the workload disk. */
export const WORKDIR = '/code';
/** Where the runner keeps task event logs and prompt records (AGENTRY_RUNNER_STATE_DIR). */
export const RUNNER_STATE_DIR = '/var/lib/agentry-runner';
/**
 * The lake server's data directory (download staging and DuckDB's spill files), on the workload
 * disk. In a pod that disk is a PVC of spec.resources.disk like a runner's, not an emptyDir: spill
 * can grow to many GB, and an emptyDir would compete for the node's ephemeral storage and get the
 * pod evicted; a claim also keeps the pod runtime one code path and is kept through hibernation
 * like a VM's disk.
 */
export const LAKE_DATA_DIR = '/var/lib/agentry-lake';

/** What lake workloads get besides their token; set by the operator's configuration. */
export interface LakeWorkloadSettings {
  /** Image of the lake server (pod) or of its VM's disk (kubevirt); unset: the runtime's default image. */
  image?: string | undefined;
  /** Dataset connectors the lake server allows (AGENTRY_LAKE_CONNECTORS); unset: the server's default. */
  connectors?: readonly string[] | undefined;
  /** Directories file:// datasets may read below (AGENTRY_LAKE_FILE_ROOTS); unset or empty: none. */
  fileRoots?: readonly string[] | undefined;
  /** Downloads may reach loopback and private addresses (AGENTRY_LAKE_PRIVATE_TARGETS); unset: no. */
  allowPrivateTargets?: boolean | undefined;
  /** AGENTRY_LAKE_MAX_RESULT_BYTES; unset: the server's default (64 MiB). */
  maxResultBytes?: number | undefined;
}

/**
 * The share of the lake's disk DuckDB's spill files may take (AGENTRY_LAKE_SPILL_LIMIT). The disk
 * also holds the database file (docs/adr/0010-durable-incremental-lake.md) and a refresh's
 * downloads: DuckDB's own default, 90% of the free space, would let one large query fill it and
 * fail the next refresh.
 */
const SPILL_SHARE_OF_DISK = 0.25;

/** The spill limit for a disk of this quantity, in DuckDB's size syntax; undefined for no readable size. */
export function spillLimitOf(disk: string | undefined): string | undefined {
  const bytes = disk === undefined ? Number.NaN : quantityValue(disk);
  if (!Number.isFinite(bytes) || bytes <= 0) return undefined;
  return `${Math.max(1, Math.floor((bytes * SPILL_SHARE_OF_DISK) / 2 ** 20))}MiB`;
}

/** The program's working directory in a pod or VM. */
export const workingDirectory = (program: WorkloadProgram): string =>
  program.name === 'runner' ? WORKDIR : LAKE_DATA_DIR;

/**
 * The program's environment in a pod or VM, besides its token (which comes from a Secret). The
 * runner's order is part of its pod template hash: changing it would redeploy every workspace.
 */
export function programEnvironment(
  program: WorkloadProgram,
  lake: LakeWorkloadSettings | undefined,
  resources: { cpu: string; disk?: string | undefined },
): Record<string, string> {
  if (program.name === 'runner') {
    return {
      AGENTRY_RUNNER_PORT: String(program.port),
      AGENTRY_RUNNER_WORKDIR: WORKDIR,
      AGENTRY_RUNNER_STATE_DIR: RUNNER_STATE_DIR,
    };
  }
  return lakeEnvironment(program.port, lake, resources);
}

/** The lake server's environment: where it listens, what it may use of its workload, the operator's settings. */
function lakeEnvironment(
  port: number,
  lake: LakeWorkloadSettings | undefined,
  resources: { cpu: string; disk?: string | undefined },
): Record<string, string> {
  const cpu = quantityValue(resources.cpu);
  const spillLimit = spillLimitOf(resources.disk);
  return {
    AGENTRY_LAKE_PORT: String(port),
    AGENTRY_LAKE_HOST: '0.0.0.0',
    AGENTRY_LAKE_DATA_DIR: LAKE_DATA_DIR,
    // DuckDB would otherwise take every core of the node, not the ones the workload was given.
    ...(Number.isFinite(cpu) ? { AGENTRY_LAKE_THREADS: String(Math.max(1, Math.ceil(cpu))) } : {}),
    ...(lake?.connectors === undefined ? {} : { AGENTRY_LAKE_CONNECTORS: lake.connectors.join(',') }),
    // Only when set: every variable added here changes lake pods' template, and so redeploys them.
    ...(lake?.fileRoots === undefined || lake.fileRoots.length === 0
      ? {}
      : { AGENTRY_LAKE_FILE_ROOTS: lake.fileRoots.join(',') }),
    ...(lake?.allowPrivateTargets === true ? { AGENTRY_LAKE_PRIVATE_TARGETS: 'true' } : {}),
    ...(lake?.maxResultBytes === undefined
      ? {}
      : { AGENTRY_LAKE_MAX_RESULT_BYTES: String(lake.maxResultBytes) }),
    ...(spillLimit === undefined ? {} : { AGENTRY_LAKE_SPILL_LIMIT: spillLimit }),
  };
}

/**
 * A warm-pool member's runner warms its prompt path up before it listens (runner/warm-up.ts), so
 * that a claim's first prompt is as fast as a later one; nobody waits for a member's start. Keyed
 * on the pool label, which a claim keeps: claiming a member never changes its workload (a pod's
 * template, a VM's cloud-init, a process's environment). Every other workload: nothing, and an
 * unchanged pod template.
 */
export function warmUpEnvironment(object: WorkloadObject): Record<string, string> {
  const pooled = object.metadata.labels?.[POOL_LABEL] !== undefined;
  return pooled && workloadProgram(object).name === 'runner' ? { AGENTRY_RUNNER_WARM_UP: 'true' } : {};
}

/** The pod volume of the workload disk, and where the program sees it. */
export function podDiskMounts(program: WorkloadProgram): {
  volume: string;
  mounts: { name: string; mountPath: string; subPath: string }[];
} {
  if (program.name === 'runner') {
    // One disk, two folders: the agent's /code, and the runner's event logs beside it (out of the
    // agent's way, and kept through hibernation like /code).
    return {
      volume: 'code',
      mounts: [
        { name: 'code', mountPath: WORKDIR, subPath: 'code' },
        { name: 'code', mountPath: RUNNER_STATE_DIR, subPath: 'runner-state' },
      ],
    };
  }
  // The lake has no /code: its disk holds DuckDB's files only (a subPath keeps lost+found out of it).
  return { volume: 'data', mounts: [{ name: 'data', mountPath: LAKE_DATA_DIR, subPath: 'lake' }] };
}
