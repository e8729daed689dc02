import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Organization } from '../crds/index.js';
import type { Config } from '../platform/config.js';
import { loadConfig } from '../platform/config.js';
import {
  NewOrganizationSchema,
  OrganizationAdminError,
  OrganizationLimitsPatchSchema,
  OrganizationPlanSchema,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizations,
  setOrganizationLimits,
  setOrganizationPlan,
} from '../platform/organization-admin.js';
import { openStore } from '../platform/store/open.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';

const HELP: Readonly<Record<string, string>> = {
  create: `usage: agentry orgs create NAME [--display-name TEXT] [--plan free|pro] [--agent-computers N]
                           [--concurrent-tasks N] [--webhooks N] [--kubeconfig PATH]
  Creates an organization (a tenant). Its resources live in namespace agentry-org-NAME.
  Then: agentry keys create --org NAME --user USER
`,
  list: `usage: agentry orgs list [--kubeconfig PATH]
  One line per organization: name, plan, agent computers, concurrent tasks, webhooks (the limits).
`,
  get: `usage: agentry orgs get NAME [--kubeconfig PATH]
  Prints the organization's spec and status as JSON.
`,
  'set-limits': `usage: agentry orgs set-limits NAME [--agent-computers N] [--concurrent-tasks N] [--webhooks N]
                               [--kubeconfig PATH]
  Changes the limits given; the others stay. Agent computers counts every agent computer except
  task-made (ephemeral) ones while they are hibernated.
`,
  'set-plan': `usage: agentry orgs set-plan NAME free|pro [--kubeconfig PATH]
  Changes the plan (the context lake needs pro).
`,
  delete: `usage: agentry orgs delete NAME --yes [--kubeconfig PATH]
  Deletes the organization. Its API keys stop working at once.
`,
};

const OVERVIEW = `usage: agentry orgs create|list|get|set-limits|set-plan|delete ... (--help after each for one)

Manages organizations (tenants) in the embedded data directory (AGENTRY_DATA_DIR, default
./data: stop \`agentry serve\` first), or in a cluster with --kubeconfig PATH.

${Object.values(HELP).join('\n')}
example:
  agentry orgs create acme --plan pro --agent-computers 20
  agentry keys create --org acme --user ci
`;

/** Each action's help, or all of them for `agentry orgs --help`. */
const usageOf = (action: string | undefined): string =>
  (action !== undefined && Object.hasOwn(HELP, action) ? HELP[action] : undefined) ?? OVERVIEW;

const count = z.coerce.number().int().min(0).max(10000).optional();
const LimitOptionsSchema = z.object({
  'agent-computers': count,
  'concurrent-tasks': count,
  webhooks: count,
});

function limitsOf(values: Record<string, unknown>): z.infer<typeof OrganizationLimitsPatchSchema> {
  const options = LimitOptionsSchema.parse(values);
  return OrganizationLimitsPatchSchema.parse({
    ...(options['agent-computers'] === undefined ? {} : { agentComputers: options['agent-computers'] }),
    ...(options['concurrent-tasks'] === undefined ? {} : { concurrentTasks: options['concurrent-tasks'] }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
  });
}

const line = (org: Organization): string => {
  const { plan, limits } = org.spec;
  return [org.metadata.name, plan, limits.agentComputers, limits.concurrentTasks, limits.webhooks].join('\t');
};

async function run(
  store: ResourceStore,
  action: string,
  args: string[],
  values: Record<string, unknown>,
): Promise<number> {
  const [name = '', extra] = args;
  switch (action) {
    case 'create': {
      const input = NewOrganizationSchema.parse({
        name,
        displayName: values['display-name'],
        plan: values.plan,
        limits: limitsOf(values),
      });
      console.log(line(await createOrganization(store, input)));
      return 0;
    }
    case 'list':
      for (const org of await listOrganizations(store)) console.log(line(org));
      return 0;
    case 'get': {
      const org = await getOrganization(store, name);
      console.log(
        JSON.stringify({ name: org.metadata.name, spec: org.spec, status: org.status ?? {} }, null, 2),
      );
      return 0;
    }
    case 'set-limits':
      console.log(line(await setOrganizationLimits(store, name, limitsOf(values))));
      return 0;
    case 'set-plan':
      console.log(line(await setOrganizationPlan(store, name, OrganizationPlanSchema.parse(extra))));
      return 0;
    default:
      if (values.yes !== true) {
        process.stderr.write(`refusing to delete ${name} without --yes\n`);
        return 2;
      }
      await deleteOrganization(store, name);
      console.error(`deleted ${name}`);
      return 0;
  }
}

/** `agentry orgs …`: organization administration on the embedded store or a cluster. */
export const orgsCommand: CliCommand = {
  usage: usageOf,
  run: (args) => runOrgsCommand(args, loadConfig()),
};

async function runOrgsCommand(args: string[], config: Config): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'display-name': { type: 'string' },
      plan: { type: 'string' },
      'agent-computers': { type: 'string' },
      'concurrent-tasks': { type: 'string' },
      webhooks: { type: 'string' },
      yes: { type: 'boolean' },
      kubeconfig: { type: 'string' },
    },
  });
  const [action, ...rest] = positionals;
  if (action === undefined) throw new UsageError('missing action');
  if (!Object.hasOwn(HELP, action)) throw new UsageError(`unknown action "${action}"`);
  if (action !== 'list' && rest[0] === undefined) throw new UsageError('missing NAME');
  if (action === 'set-plan' && rest[1] === undefined) throw new UsageError('missing the plan (free or pro)');
  const store = await openStore(config, values.kubeconfig);
  try {
    return await run(store, action, rest, values);
  } catch (err) {
    if (err instanceof OrganizationAdminError) {
      process.stderr.write(`agentry orgs: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}
