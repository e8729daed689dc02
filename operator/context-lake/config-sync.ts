import { setTimeout as sleep } from 'node:timers/promises';
import { CONTEXT_LAKE_SECRET_NAME } from '../../crds/index.js';
import type { ContextLake, Secret } from '../../crds/index.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { describeError as describe } from '../../platform/describe-error.js';
import { redactSecrets, resolveLakeConfig } from './resolve-config.js';

/** What talking to a running lake server found. Every message is free of credential values. */
export type LakeSyncResult =
  | {
      kind: 'answered';
      status: LakeStatus;
      /** This pass handed the lake its configuration. */
      pushed: boolean;
      secretValues: readonly string[];
    }
  /** The workload runs but its lake server did not answer (starting, or unwell). */
  | { kind: 'unreachable'; problem: string }
  /** The configuration cannot be applied until the resource or its Secret changes. */
  | { kind: 'config-invalid'; problem: string; status: LakeStatus; secretValues: readonly string[] };

/**
 * Keeps each lake server on its ContextLake's configuration: reads GET /v1/status and, when the
 * lake's latest configuration is not this one (another generation, or this generation with other
 * credential values: the revision, a digest of the resolved configuration, tells), resolves the
 * secret references and PUTs /v1/config. The lake loads in the background and keeps serving the
 * old data meanwhile; it reports the revision it converges to, so a load in progress is not pushed
 * again, by this operator or by the next one after a restart.
 */
export class LakeConfigSync {
  constructor(private readonly options: { timeoutMs?: number } = {}) {}

  async sync(
    lake: ContextLake,
    where: { endpoint: string; token: string },
    credentials: Secret | undefined,
  ): Promise<LakeSyncResult> {
    const client = new LakeClient({ ...where, timeoutMs: this.options.timeoutMs ?? 10_000 });
    let status: LakeStatus;
    try {
      status = await client.status();
    } catch (err) {
      return { kind: 'unreachable', problem: describe(err) };
    }
    const resolved = resolveLakeConfig(lake.spec.config, credentials);
    if (!resolved.ok) {
      const keys = resolved.missingKeys.join(', ');
      const problem = `the Secret ${credentialsName(lake)} has no key ${keys} referenced by \${secrets:...} in spec.config`;
      return { kind: 'config-invalid', problem, status, secretValues: [] };
    }
    const { secretValues } = resolved;
    const generation = lake.metadata.generation ?? 0;
    const revision = `${generation}:${resolved.digest}`;
    if (status.revision === revision) return { kind: 'answered', status, pushed: false, secretValues };
    try {
      status = await client.applyConfig({ generation, config: resolved.config, revision });
    } catch (err) {
      const problem = redactSecrets(describe(err), secretValues);
      if (err instanceof LakeRequestError && err.status === 400)
        return { kind: 'config-invalid', problem, status, secretValues };
      return { kind: 'unreachable', problem };
    }
    return { kind: 'answered', status: await settle(client, status), pushed: true, secretValues };
  }
}

/** How long a push waits for the lake to apply it before the pass reports what it saw. */
const SETTLE_MS = 1_000;

/**
 * A push that changes no dataset (a spec edit outside the config: idleTimeout, restartedAt...)
 * applies in milliseconds; reading the status again for a moment lets this pass report Ready at
 * once instead of a Loading blip until the next one. Real loads just keep loading.
 */
async function settle(client: LakeClient, pushed: LakeStatus): Promise<LakeStatus> {
  let status = pushed;
  for (const deadline = Date.now() + SETTLE_MS; status.loading && Date.now() < deadline;) {
    await sleep(100);
    status = await client.status().catch(() => status);
  }
  return status;
}

const credentialsName = (lake: ContextLake): string =>
  `${lake.metadata.namespace ?? ''}/${CONTEXT_LAKE_SECRET_NAME}`;
