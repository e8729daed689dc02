import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { promptAccessOf } from '../../operator/task/workspace-access.js';
import type { WorkspaceAccess } from '../../operator/task/workspace-access.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { ExecutorDefinition } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { PromptTokens } from '../../platform/model-gateway/token.js';

const NOW_MS = Date.parse('2026-11-22T10:00:00.000Z');
const tokens = new PromptTokens(new InstallationKey(randomBytes(32)));
const catalog = new ExecutorCatalog();
const definition = (name: string): ExecutorDefinition => {
  const found = catalog.get(name);
  if (found === undefined) throw new Error(`no executor ${name}`);
  return found;
};
const claims = {
  namespace: 'agentry-org-acme',
  task: 't-1',
  prompt: '00000000-0000-4000-8000-000000000001',
  executor: 'claude',
  workspace: 'box',
};
const GATEWAY = 'http://agentry-api.agentry-system.svc:8080';
const PROXY = 'http://agentry-egress.agentry-system.svc:3128';

const accessOf = (access: Omit<WorkspaceAccess, 'tokens'> | undefined, executor = 'claude') =>
  promptAccessOf(
    access === undefined ? undefined : { ...access, tokens },
    definition(executor),
    { ...claims, executor },
    3600,
    NOW_MS,
  );

describe('promptAccessOf', () => {
  it('gives nothing when neither the gateway nor the proxy is configured', () => {
    for (const access of [undefined, {}]) {
      const none = accessOf(access);
      expect(none.env).toEqual({});
      expect([...none.routedKeyVariables]).toEqual([]);
      expect(none.modelGateway).toBeUndefined();
    }
  });

  it("gives the routed key variables the prompt's token and the base URLs the gateway", () => {
    const access = accessOf({ gatewayUrl: GATEWAY });
    const token = access.env['ANTHROPIC_API_KEY'] ?? '';
    expect(tokens.verify(token, NOW_MS)).toEqual({ ...claims, exp: NOW_MS / 1000 + 3600 + 300 });
    expect(access.env['ANTHROPIC_BASE_URL']).toBe(`${GATEWAY}/model-gateway/anthropic`);
    expect([...access.routedKeyVariables]).toEqual(['ANTHROPIC_API_KEY']);
    expect(access.modelGateway).toEqual({ url: GATEWAY, token });
  });

  it('routes every key variable of every provider of an executor, with one token', () => {
    const access = accessOf({ gatewayUrl: `${GATEWAY}/` }, 'opencode');
    expect(access.env).toMatchObject({
      ANTHROPIC_BASE_URL: `${GATEWAY}/model-gateway/anthropic`,
      OPENAI_BASE_URL: `${GATEWAY}/model-gateway/openai/v1`,
    });
    expect(access.env['OPENAI_API_KEY']).toBe(access.env['ANTHROPIC_API_KEY']);
    expect([...access.routedKeyVariables].sort()).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
  });

  it('routes nothing for an executor without model routes, though it gets the proxy', () => {
    const access = accessOf({ gatewayUrl: GATEWAY, egressProxyUrl: PROXY }, 'shell');
    expect([...access.routedKeyVariables]).toEqual([]);
    expect(Object.keys(access.env).sort()).toEqual(
      ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'].sort(),
    );
  });

  it('points every proxy variable at the egress proxy with the token as its password, the gateway direct', () => {
    const access = accessOf({ gatewayUrl: GATEWAY, egressProxyUrl: PROXY, directHosts: ['127.0.0.1'] });
    const proxy = new URL(access.env['HTTPS_PROXY'] ?? '');
    expect(proxy.host).toBe('agentry-egress.agentry-system.svc:3128');
    expect(proxy.username).toBe('prompt');
    expect(decodeURIComponent(proxy.password)).toBe(access.env['ANTHROPIC_API_KEY']);
    for (const name of ['HTTP_PROXY', 'https_proxy', 'http_proxy'])
      expect(access.env[name]).toBe(access.env['HTTPS_PROXY']);
    expect(access.env['NO_PROXY']).toBe('agentry-api.agentry-system.svc,127.0.0.1');
    expect(access.env['no_proxy']).toBe(access.env['NO_PROXY']);
  });

  it('gives the proxy without routing keys when only the proxy is configured', () => {
    const access = accessOf({ egressProxyUrl: PROXY });
    expect(access.env['ANTHROPIC_API_KEY']).toBeUndefined();
    expect(access.env['HTTPS_PROXY']).toMatch(/^http:\/\/prompt:agp1\./);
    expect(access.env['NO_PROXY']).toBeUndefined();
    expect(access.modelGateway).toBeUndefined();
  });

  it("gives the lake client the API's lake URL and the prompt's token when only the API server is known", () => {
    const access = accessOf({ apiUrl: `${GATEWAY}/` }, 'shell');
    expect(Object.keys(access.env).sort()).toEqual(['AGENTRY_LAKE_TOKEN', 'AGENTRY_LAKE_URL']);
    expect(access.env['AGENTRY_LAKE_URL']).toBe(`${GATEWAY}/v1/context-lake`);
    expect(tokens.verify(access.env['AGENTRY_LAKE_TOKEN'] ?? '', NOW_MS)).toEqual({
      ...claims,
      executor: 'shell',
      exp: NOW_MS / 1000 + 3600 + 300,
    });
    expect(access.modelGateway).toBeUndefined();
  });

  it('gives the lake client, the gateway and the proxy one token, with the API server reached directly', () => {
    const access = accessOf({ apiUrl: GATEWAY, gatewayUrl: GATEWAY, egressProxyUrl: PROXY });
    expect(access.env['AGENTRY_LAKE_TOKEN']).toBe(access.env['ANTHROPIC_API_KEY']);
    expect(access.env['NO_PROXY']).toBe('agentry-api.agentry-system.svc');
  });
});
