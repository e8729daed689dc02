// The peer's binary and CRD: build-binaries.sh builds agent-sandbox from Go modules, or finds it in
// the tool cache outside the repository.
import { z } from 'zod';
import { HARNESS_DIR, run } from '../../test/cluster/harness/tools.js';

const PeerToolsSchema = z.object({ AGENT_SANDBOX_CONTROLLER: z.string(), AGENT_SANDBOX_CRD: z.string() });

export interface PeerTools {
  controller: string;
  crd: string;
}

/** A cold build takes a few minutes on 2 cores (Go module downloads and compile); a warm one, a second. */
export async function buildPeerTools(): Promise<PeerTools> {
  const out = await run('bash', [`${HARNESS_DIR}/build-binaries.sh`, '--only', 'agent-sandbox'], {
    timeoutMs: 30 * 60_000,
  });
  const entries = out
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  const tools = PeerToolsSchema.parse(Object.fromEntries(entries));
  return { controller: tools.AGENT_SANDBOX_CONTROLLER, crd: tools.AGENT_SANDBOX_CRD };
}
