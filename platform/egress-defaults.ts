import type { EgressRule } from '../crds/egress.js';

/**
 * What every workspace may reach through the egress proxy unless the installation says otherwise
 * (AGENTRY_EGRESS_ALLOW, docs/egress.md#defaults): the git host tasks clone from and the public
 * package registries agents install from. Model providers are not here: executors reach them
 * through the model gateway, which is not behind the proxy.
 */
export const DEFAULT_EGRESS_ALLOW: readonly EgressRule[] = [
  { host: 'github.com' },
  { host: '*.github.com' },
  { host: '*.githubusercontent.com' },
  { host: 'registry.npmjs.org' },
  { host: 'registry.yarnpkg.com' },
  { host: 'pypi.org' },
  { host: 'files.pythonhosted.org' },
  { host: 'proxy.golang.org' },
  { host: 'sum.golang.org' },
  { host: 'crates.io' },
  { host: 'static.crates.io' },
  { host: 'index.crates.io' },
  { host: 'deb.debian.org' },
];
