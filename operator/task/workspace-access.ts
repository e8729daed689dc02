import type { ExecutorDefinition } from '../../platform/executor-catalog.js';
import { gatewayBaseUrl } from '../../platform/model-gateway/providers.js';
import { LAKE_API_PATH, LAKE_CLIENT_ENV } from '../../platform/lake-client-env.js';
import { promptTokenExpiry } from '../../platform/model-gateway/token.js';
import type { PromptTokenClaims, PromptTokens } from '../../platform/model-gateway/token.js';

/**
 * How a prompt's processes reach the world outside their workspace (docs/adr/0009): model calls
 * through the model gateway, the organization's context lake through the API server, everything
 * else through the egress proxy, all with one token issued per prompt. A part left undefined is
 * off (keys resolved into the environment; no lake client; no proxy).
 */
export interface WorkspaceAccess {
  tokens: PromptTokens;
  /**
   * The API server as workspaces reach it (AGENTRY_INTERNAL_URL), whether or not the model gateway
   * is on: the `agentry lake` client reads the organization's lake there (docs/lake-client.md).
   */
  apiUrl?: string | undefined;
  /** The API server as workspaces reach it (AGENTRY_INTERNAL_URL), when the model gateway is on. */
  gatewayUrl?: string | undefined;
  /** The egress proxy as workspaces reach it (AGENTRY_EGRESS_PROXY_URL). */
  egressProxyUrl?: string | undefined;
  /** Hosts reached directly rather than through the proxy, besides the gateway's (loopback in the embedded default). */
  directHosts?: readonly string[] | undefined;
}

/** What one prompt gets: variables set over the executor's own, and the variables no Secret is read for. */
export interface PromptAccess {
  env: Record<string, string>;
  /** Key variables the gateway serves: their Secret is never read, so the key never reaches the workspace. */
  routedKeyVariables: ReadonlySet<string>;
  /** Where the runner asks the gateway for the prompt's metered usage. */
  modelGateway?: { url: string; token: string };
}

const NO_ACCESS: PromptAccess = { env: {}, routedKeyVariables: new Set() };

function lakeClientEnv(apiUrl: string | undefined, token: string): Record<string, string> {
  if (apiUrl === undefined) return {};
  return {
    [LAKE_CLIENT_ENV.url]: `${apiUrl.replace(/\/+$/, '')}${LAKE_API_PATH}`,
    [LAKE_CLIENT_ENV.token]: token,
  };
}

/** The proxy URL with the token as its password: curl, git, pip and npm all read credentials from it. */
function proxyUrlWithToken(proxyUrl: string, token: string): string {
  const url = new URL(proxyUrl);
  url.username = 'prompt';
  url.password = token;
  return url.toString().replace(/\/$/, '');
}

function proxyEnv(access: WorkspaceAccess, token: string): Record<string, string> {
  if (access.egressProxyUrl === undefined) return {};
  const proxy = proxyUrlWithToken(access.egressProxyUrl, token);
  const direct = [
    ...[access.gatewayUrl, access.apiUrl].flatMap((url) =>
      url === undefined ? [] : [new URL(url).hostname],
    ),
    ...(access.directHosts ?? []),
  ];
  const noProxy = [...new Set(direct)].join(',');
  // Both spellings: curl reads only the lowercase http_proxy, Go and Python read either.
  return {
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    ...(noProxy === '' ? {} : { NO_PROXY: noProxy, no_proxy: noProxy }),
  };
}

/** The access of one prompt run by `definition`: its token, gateway, lake client and proxy variables. */
export function promptAccessOf(
  access: WorkspaceAccess | undefined,
  definition: ExecutorDefinition,
  claims: Omit<PromptTokenClaims, 'exp'>,
  timeoutSeconds: number,
  nowMs: number = Date.now(),
): PromptAccess {
  if (
    access === undefined ||
    (access.gatewayUrl === undefined && access.egressProxyUrl === undefined && access.apiUrl === undefined)
  )
    return NO_ACCESS;
  const token = access.tokens.issue({ ...claims, exp: promptTokenExpiry(nowMs, timeoutSeconds) });
  const env: Record<string, string> = { ...proxyEnv(access, token), ...lakeClientEnv(access.apiUrl, token) };
  const routedKeyVariables = new Set<string>();
  const { gatewayUrl } = access;
  if (gatewayUrl !== undefined) {
    for (const route of definition.modelGateway) {
      for (const variable of route.keyVariables) {
        env[variable] = token;
        routedKeyVariables.add(variable);
      }
      for (const variable of route.baseUrlVariables)
        env[variable] = gatewayBaseUrl(gatewayUrl, route.provider);
    }
  }
  return {
    env,
    routedKeyVariables,
    ...(gatewayUrl === undefined ? {} : { modelGateway: { url: gatewayUrl, token } }),
  };
}
