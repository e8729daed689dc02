import { parseArgs } from 'node:util';
import type { Config } from '../platform/config.js';
import { loadConfig } from '../platform/config.js';
import { parseDuration } from '../platform/duration.js';
import { openStore } from '../platform/store/open.js';
import { WebhookSigningKeys } from '../platform/webhook-signing.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';

const USAGE = `usage:
  agentry webhook-keys show [--kubeconfig PATH]
  agentry webhook-keys rotate [--window 24h] [--kubeconfig PATH]

Prints the public key document of the webhook signing keys as JSON (never a private key). rotate
makes a new signing key; the previous one keeps signing too for the window, so receivers can fetch
the new public key from GET /v1/webhooks/public_key before it is the only one.

options:
  --window DURATION  how long the previous key keeps signing, a Go duration (default 24h)
  --kubeconfig PATH  work on that cluster's Secret instead of the embedded data directory

settings (environment variables):
  AGENTRY_DATA_DIR   the embedded data directory (default ./data)
  AGENTRY_NAMESPACE  the control namespace where the keys live (default agentry-system)

example:
  agentry webhook-keys rotate --window 48h
`;

const DEFAULT_WINDOW = '24h';

/** The window in milliseconds, or undefined for text that is not a duration. */
function windowMsOf(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/**
 * `agentry webhook-keys show|rotate` against the embedded data directory or a cluster's Secret.
 * Prints the public key document (never a private key) as JSON on stdout.
 */
async function runWebhookKeysCommand(args: string[], config: Config): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { window: { type: 'string' }, kubeconfig: { type: 'string' } },
  });
  const [action] = positionals;
  const windowMs = windowMsOf(values.window ?? DEFAULT_WINDOW);
  if (action !== 'show' && action !== 'rotate')
    throw new UsageError(action === undefined ? 'missing action' : `unknown action "${action}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1] ?? ''}"`);
  if (windowMs === undefined) throw new UsageError('--window must be a duration such as 24h');
  const namespace = config.AGENTRY_NAMESPACE;
  const store = await openStore(config, values.kubeconfig);
  try {
    const keys =
      action === 'rotate'
        ? await WebhookSigningKeys.rotate(store, namespace, { windowMs })
        : await WebhookSigningKeys.load(store, namespace);
    const document = keys.publicKeyDocument();
    if (action === 'rotate') {
      const retiring = document.previous.map((key) => `${key.keyId} until ${key.retiresAt}`).join(', ');
      console.error(
        `new signing key ${document.keyId}${retiring === '' ? '' : `; still signing: ${retiring}`}`,
      );
    }
    console.log(JSON.stringify(document, null, 2));
    return 0;
  } finally {
    await store.close();
  }
}

export const webhookKeysCommand: CliCommand = {
  usage: () => USAGE,
  run: (args) => runWebhookKeysCommand(args, loadConfig()),
};
