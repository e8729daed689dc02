import type { DispatchPrompt } from '../platform/runner-protocol.js';
import { syncAgentInstructions } from './agent-instructions.js';
import { installSkills } from './skills/skill-install.js';
import type { SkillWarning } from './skills/skill-install.js';

/**
 * What the executor reads besides the prompt: the workspace's agent instructions and the prompt's
 * skills. Instructions that cannot be written fail the prompt (a WorkspacePrepError); skills only
 * ever warn.
 */
export async function prepareAgent(
  context: { workdir: string; stateDir: string },
  request: DispatchPrompt,
  signal: AbortSignal,
): Promise<SkillWarning[]> {
  const file = request.executor.instructionsFile;
  if (file !== undefined) await syncAgentInstructions(context.workdir, file, request.agentInstructions);
  return installSkills(context.workdir, context.stateDir, request, signal);
}
