import { SecretType, secretValue } from '../../crds/index.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import type { ResourceStore } from '../../platform/store/types.js';

/** How long a key read from a Secret is reused: a rotated key is picked up within this long. */
const KEY_CACHE_MS = 30_000;
/** Keys remembered at most (organizations × executors' Secrets); past it the cache starts over. */
const MAX_CACHED_KEYS = 10_000;

/**
 * The real provider key of a call: the executor's route for the provider names key variables, and
 * the first one's `secretKeyRef` names the Secret in the organization's namespace. The embedded
 * default falls back to its own environment variable of that name, as dispatch did before
 * (executorEnvOfThisProcess in cli/serve.ts).
 */
export class ProviderKeys {
  private readonly cache = new Map<string, { value: string | undefined; until: number }>();

  constructor(
    private readonly store: ResourceStore,
    private readonly executors: ExecutorCatalog,
    /** Variable → value of the serving process (the embedded default); empty elsewhere. */
    private readonly fallback: Readonly<Record<string, string>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key, or undefined when the executor has no route for the provider or no key is configured. */
  async keyFor(namespace: string, executor: string, provider: ModelProvider): Promise<string | undefined> {
    const definition = this.executors.get(executor);
    const variable = definition?.modelGateway.find((route) => route.provider === provider)?.keyVariables[0];
    const source = variable === undefined ? undefined : definition?.env[variable];
    if (variable === undefined || source === undefined || !('secretKeyRef' in source)) return undefined;
    const { name, key } = source.secretKeyRef;
    const fromSecret = await this.secretValue(namespace, name, key);
    return fromSecret ?? this.fallback[variable];
  }

  private async secretValue(namespace: string, name: string, key: string): Promise<string | undefined> {
    const cacheKey = `${namespace}/${name}/${key}`;
    const cached = this.cache.get(cacheKey);
    const at = this.now();
    if (cached !== undefined && cached.until > at) return cached.value;
    const secret = await this.store.get(SecretType, namespace, name);
    const value = secret === undefined ? undefined : secretValue(secret, key);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
    this.cache.set(cacheKey, { value, until: at + KEY_CACHE_MS });
    return value;
  }
}
