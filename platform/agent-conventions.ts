import type { ExecutorInvocation } from './runner-protocol.js';

/**
 * Where each kind of agent CLI reads project instructions and project skills, relative to the
 * working directory, from each CLI's documentation:
 * - Claude Code: CLAUDE.md; skills in .claude/skills/<name>/SKILL.md.
 * - Codex: AGENTS.md; repository skills in .agents/skills/<name>/SKILL.md.
 * - Gemini CLI: GEMINI.md; workspace skills in .gemini/skills/<name>/SKILL.md.
 * - OpenCode: AGENTS.md; project skills in .opencode/skills/<name>/SKILL.md.
 * - `lines` (the shell executor): no agent reads anything; instructions go to AGENTS.md (the
 *   cross-agent convention, which scripts may read), and there is no skills directory.
 * An executors file may name other paths per executor (`instructionsFile`, `skillsDir`).
 */
export interface AgentConventions {
  instructionsFile: string;
  /** Undefined: the executor has no skills; a prompt naming skills gets a warning event. */
  skillsDir: string | undefined;
}

const BY_FORMAT: Readonly<Record<ExecutorInvocation['format'], AgentConventions>> = {
  'claude-stream-json': { instructionsFile: 'CLAUDE.md', skillsDir: '.claude/skills' },
  'codex-json': { instructionsFile: 'AGENTS.md', skillsDir: '.agents/skills' },
  'gemini-stream-json': { instructionsFile: 'GEMINI.md', skillsDir: '.gemini/skills' },
  'opencode-json': { instructionsFile: 'AGENTS.md', skillsDir: '.opencode/skills' },
  lines: { instructionsFile: 'AGENTS.md', skillsDir: undefined },
};

export const conventionsOf = (format: ExecutorInvocation['format']): AgentConventions => BY_FORMAT[format];

/** A path relative to the working directory that stays inside it (checked again by the runner). */
export const RELATIVE_WORKSPACE_PATH = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._/-]{1,255}$/;
