import { z } from 'zod';
import {
  AgentComputerType,
  MAX_AGENT_INSTRUCTIONS_LENGTH,
  SecretType,
  agentComputerEnvSecretName,
  secretData,
} from '../../crds/index.js';
import type { AgentComputer, Secret } from '../../crds/index.js';
import { ExecutorEnvSchema } from '../../platform/executor-env.js';
import type { ExecutorEnv } from '../../platform/executor-env.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ApiError } from '../errors.js';
import { updateWithRetry, upsertWithRetry } from '../optimistic-update.js';

const instructions = z.string().max(MAX_AGENT_INSTRUCTIONS_LENGTH).nullable().optional();

/**
 * PATCH /agent-computers/:id: each field given replaces what was there (`null` or `""` clears the
 * instructions, `null` or `{}` the environment). Clients of the hosted service send snake_case;
 * camelCase is accepted too. Unknown fields are ignored.
 */
export const PatchAgentComputerBodySchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    agent_instructions: instructions,
    agentInstructions: instructions,
    env: ExecutorEnvSchema.nullable().optional(),
  })
  .refine(
    (body) =>
      body.agent_instructions === undefined ||
      body.agentInstructions === undefined ||
      body.agent_instructions === body.agentInstructions,
    { message: 'agent_instructions and agentInstructions differ; send one', path: ['agentInstructions'] },
  );
export type PatchAgentComputerBody = z.infer<typeof PatchAgentComputerBodySchema>;

const ENV_SECRET_TYPE = 'agentry.dev/executor-env';

/** The environment Secret, owned by its AgentComputer so that deleting the workspace removes it. */
function envSecret(ac: AgentComputer, env: ExecutorEnv): Secret {
  const uid = ac.metadata.uid;
  if (uid === undefined) throw new Error('the store returned an agent computer without a uid');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: ENV_SECRET_TYPE,
    metadata: {
      name: agentComputerEnvSecretName(ac.metadata.name),
      namespace: ac.metadata.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'agentry', 'agentry.dev/agent-computer': ac.metadata.name },
      ownerReferences: [{ apiVersion: ac.apiVersion, kind: ac.kind, name: ac.metadata.name, uid }],
    },
    data: secretData(env),
  };
}

/** Writes (or, for an empty map, deletes) the workspace's environment Secret. */
async function writeEnv(store: ResourceStore, ac: AgentComputer, env: ExecutorEnv): Promise<void> {
  const namespace = ac.metadata.namespace ?? '';
  const name = agentComputerEnvSecretName(ac.metadata.name);
  if (Object.keys(env).length === 0) {
    await store.delete(SecretType, namespace, name).catch((err: unknown) => {
      if (!isStoreError(err, 'NotFound')) throw err;
    });
    return;
  }
  const wanted = envSecret(ac, env);
  await upsertWithRetry(
    store,
    SecretType,
    namespace,
    name,
    (current) => ({
      ...current,
      type: wanted.type,
      metadata: {
        ...current.metadata,
        ...wanted.metadata,
        resourceVersion: current.metadata.resourceVersion,
      },
      data: wanted.data,
    }),
    () => wanted,
  );
}

/**
 * Applies a PATCH: the Secret first, then the spec, so the names the spec shows never run ahead of
 * the values an executor gets. Resolves the AgentComputer as written.
 */
export async function configureAgentComputer(
  store: ResourceStore,
  ac: AgentComputer,
  body: PatchAgentComputerBody,
): Promise<AgentComputer> {
  const env = body.env === null ? {} : body.env;
  if (env !== undefined) await writeEnv(store, ac, env);
  const given = body.agentInstructions ?? body.agent_instructions;
  const cleared = body.agentInstructions === null || body.agent_instructions === null || given === '';
  const updated = await updateWithRetry(
    store,
    AgentComputerType,
    ac.metadata.namespace,
    ac.metadata.name,
    (current) => {
      const spec = { ...current.spec };
      if (body.name !== undefined) spec.displayName = body.name;
      if (cleared) delete spec.agentInstructions;
      else if (given !== undefined && given !== null) spec.agentInstructions = given;
      if (env !== undefined) {
        const names = Object.keys(env).sort();
        if (names.length === 0) delete spec.envNames;
        else spec.envNames = names;
      }
      return { ...current, spec };
    },
  );
  if (updated === undefined || updated.metadata.uid !== ac.metadata.uid)
    throw ApiError.notFound('Agent computer');
  return updated;
}
