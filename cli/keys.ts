import { parseArgs } from 'node:util';
import { z } from 'zod';
import { issueApiKey, listApiKeys, revokeApiKey } from '../api/auth/api-keys.js';
import { SCOPES, ScopeSchema } from '../api/auth/scopes.js';
import { OrganizationType } from '../crds/index.js';
import type { Config } from '../platform/config.js';
import { loadConfig } from '../platform/config.js';
import { openStore } from '../platform/store/open.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';
import { wrapList } from './settings-help.js';

const USAGE = `usage:
  agentry keys create --org ORG --user USER [--scopes a,b] [--name TEXT] [--expires-at ISO]
                      [--kubeconfig PATH]
  agentry keys list [--org ORG] [--kubeconfig PATH]
  agentry keys revoke KEY_ID [--kubeconfig PATH]

Manages API keys. create prints the new key once on stdout (only its hash is kept); list prints
one line per key: id, organization, user, scopes, expiry, name.

options:
  --org ORG          the organization (create: required; list: only its keys)
  --user USER        whom the key is for (create: required)
  --scopes a,b       what the key may do, comma separated (default *: all but installation:admin):
${wrapList(SCOPES, '                       ')}
  --name TEXT        a label shown by list
  --expires-at ISO   when the key stops working, e.g. 2030-01-01T00:00:00Z (default never)
  --kubeconfig PATH  work on that cluster's Secrets instead of the embedded data directory

settings (environment variables):
  AGENTRY_DATA_DIR   the embedded data directory (default ./data; stop \`agentry serve\` first)
  AGENTRY_NAMESPACE  the control namespace where keys live (default agentry-system)

example:
  agentry keys create --org default --user ci --scopes tasks:read,tasks:write
`;

const CreateOptionsSchema = z.object({
  org: z.string().min(1),
  user: z.string().min(1).max(253),
  scopes: z
    .string()
    .default('*')
    .transform((value) => value.split(',').map((scope) => scope.trim()))
    .pipe(z.array(ScopeSchema).min(1)),
  name: z.string().max(200).optional(),
  'expires-at': z.iso.datetime({ offset: true }).optional(),
});

type KeysOptions = Record<string, string | undefined>;

async function createKey(store: ResourceStore, namespace: string, values: KeysOptions): Promise<number> {
  const options = CreateOptionsSchema.parse(values);
  if ((await store.get(OrganizationType, undefined, options.org)) === undefined) {
    console.error(`no organization "${options.org}" (the embedded default creates "default" on first start)`);
    return 1;
  }
  const expiresAt = options['expires-at'];
  const { key, record } = await issueApiKey(store, namespace, {
    organization: options.org,
    user: options.user,
    scopes: options.scopes,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
  });
  console.error(`created key ${record.id} for ${record.user} in ${record.organization} (shown once):`);
  console.log(key);
  return 0;
}

async function listKeys(store: ResourceStore, namespace: string, org: string | undefined): Promise<number> {
  const keys = await listApiKeys(store, namespace, org === undefined ? {} : { organization: org });
  for (const key of keys) {
    console.log(
      [key.id, key.organization, key.user, key.scopes.join(','), key.expiresAt ?? '-', key.name].join('\t'),
    );
  }
  return 0;
}

async function revokeKey(store: ResourceStore, namespace: string, id: string): Promise<number> {
  const revoked = await revokeApiKey(store, namespace, id);
  console.error(revoked ? `revoked ${id}` : `no key ${id}`);
  return revoked ? 0 : 1;
}

/** `agentry keys create|list|revoke` against the embedded data directory or a cluster's Secrets. */
export const keysCommand: CliCommand = {
  usage: () => USAGE,
  run: (args) => runKeysCommand(args, loadConfig()),
};

async function runKeysCommand(args: string[], config: Config): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      kubeconfig: { type: 'string' },
    },
  });
  const [action, id] = positionals;
  if (action !== 'create' && action !== 'list' && action !== 'revoke')
    throw new UsageError(action === undefined ? 'missing action' : `unknown action "${action}"`);
  if (action === 'revoke' && id === undefined) throw new UsageError('missing KEY_ID');
  const namespace = config.AGENTRY_NAMESPACE;
  const store = await openStore(config, values.kubeconfig);
  try {
    if (action === 'create') return await createKey(store, namespace, values);
    if (action === 'list') return await listKeys(store, namespace, values.org);
    return await revokeKey(store, namespace, id ?? '');
  } finally {
    await store.close();
  }
}
