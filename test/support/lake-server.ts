import { LakeConfigSchema } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import type { RunningLake } from '../../lake/server.js';
import type { Dataset } from '../../crds/context-lake/types.js';
import type { LakeClient } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { createLogger } from '../../platform/log.js';

/** A lake server in this process on a loopback port, small and quiet; `env` adds or overrides. */
export function startTestLake(token: string, env: Record<string, string>): Promise<RunningLake> {
  return startLakeServer(
    LakeConfigSchema.parse({
      AGENTRY_LAKE_TOKEN: token,
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
      AGENTRY_LAKE_THREADS: '1',
      ...env,
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
}

/** Pushes a config of this one dataset as `generation` and waits until it settled; answers its state. */
export async function loadOneDataset(
  client: LakeClient,
  generation: number,
  dataset: Dataset,
): Promise<LakeStatus['datasets'][string]> {
  await client.applyConfig({ generation, config: { name: 'one', datasets: [dataset] } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await client.status();
    const state = status.datasets[dataset.name];
    if (!status.loading && status.generation === generation && state !== undefined) return state;
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
