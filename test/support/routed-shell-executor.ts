/**
 * An executor definition for tests of the model gateway: the prompt is a bash script (the `lines`
 * format), and its anthropic key variable is routed like Claude Code's, so the script sees what a
 * CLI in a workspace would: ANTHROPIC_BASE_URL at the gateway and a prompt token as the key.
 */
export const routedShellExecutor = (name: string) => ({
  name,
  format: 'lines',
  command: 'bash',
  args: ['{promptFile}'],
  promptVia: 'file',
  env: {
    ANTHROPIC_API_KEY: { secretKeyRef: { name: 'agentry-executor-claude', key: 'ANTHROPIC_API_KEY' } },
  },
  modelGateway: [
    { provider: 'anthropic', keyVariables: ['ANTHROPIC_API_KEY'], baseUrlVariables: ['ANTHROPIC_BASE_URL'] },
  ],
});
