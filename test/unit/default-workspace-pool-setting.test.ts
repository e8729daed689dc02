// AGENTRY_DEFAULT_WORKSPACE_POOL: a WorkspacePool spec as JSON, parsed (with the spec's defaults)
// at start-up; a bad value stops start-up naming the setting and the problem.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';

describe('AGENTRY_DEFAULT_WORKSPACE_POOL', () => {
  it('is null when unset or null: no default pool', () => {
    expect(loadConfig({}).AGENTRY_DEFAULT_WORKSPACE_POOL).toBeNull();
    expect(loadConfig({ AGENTRY_DEFAULT_WORKSPACE_POOL: 'null' }).AGENTRY_DEFAULT_WORKSPACE_POOL).toBeNull();
  });

  it("parses a spec and fills in the spec's defaults", () => {
    expect(
      loadConfig({ AGENTRY_DEFAULT_WORKSPACE_POOL: '{"minReady":3}' }).AGENTRY_DEFAULT_WORKSPACE_POOL,
    ).toEqual({
      minReady: 3,
      refillPerMinute: 600,
      template: { idleTimeout: '15m' },
    });
  });

  it.each([
    ['{min', /AGENTRY_DEFAULT_WORKSPACE_POOL: must be JSON/],
    ['{"minReady":-1}', /AGENTRY_DEFAULT_WORKSPACE_POOL\.minReady: Too small/],
    ['{"template":{"runtime":"docker"}}', /AGENTRY_DEFAULT_WORKSPACE_POOL\.template\.runtime/],
  ])('refuses %s, naming the setting', (value, message) => {
    expect(() => loadConfig({ AGENTRY_DEFAULT_WORKSPACE_POOL: value })).toThrow(message);
  });
});
