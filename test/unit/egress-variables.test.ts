// The egress proxy's variables: clients cannot set them on an executor, and the runner's own git
// fetch uses the prompt's.
import { describe, expect, it } from '@jest/globals';
import { envNameProblem } from '../../platform/executor-env.js';
import { proxyVariablesOf } from '../../runner/workspace-git.js';

describe('proxy variables', () => {
  it.each([
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NO_PROXY',
    'no_proxy',
    'ALL_PROXY',
    'All_Proxy',
  ])('reserves %s in executor env, so a client cannot route around the proxy', (name) => {
    expect(envNameProblem(name)).toBe('is reserved for the workspace itself');
  });

  it("picks the proxy variables out of a prompt's executor env for git, and nothing else", () => {
    expect(
      proxyVariablesOf({
        HTTPS_PROXY: 'http://prompt:t@proxy:3128',
        http_proxy: 'http://prompt:t@proxy:3128',
        NO_PROXY: 'api',
        ANTHROPIC_API_KEY: 'agp1.x',
        PROXY_MODE: 'x',
      }),
    ).toEqual({
      HTTPS_PROXY: 'http://prompt:t@proxy:3128',
      http_proxy: 'http://prompt:t@proxy:3128',
      NO_PROXY: 'api',
    });
  });
});
