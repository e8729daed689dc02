// Jest runs TypeScript as native ESM (node --experimental-vm-modules): @kubernetes/client-node 1.x
// is ESM-only, so a CommonJS transform of our code could not import it.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

/** @param {string} name @param {Record<string, unknown>} extra */
function project(name, extra = {}) {
  return {
    displayName: name,
    testEnvironment: 'node',
    roots: [`<rootDir>/test/${name}`],
    testMatch: ['**/*.test.ts'],
    extensionsToTreatAsEsm: ['.ts'],
    transform: { '^.+\\.ts$': swc },
    // Sources import siblings as "./x.js" (NodeNext); map that to the .ts file under test.
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    ...extra,
  };
}

export default {
  // Global only: jest ignores testTimeout inside a project. Generous, never a speed assertion.
  testTimeout: 60_000,
  projects: [
    project('unit'),
    project('integration'),
    // Headless Chromium (Debian's) against the embedded stack serving the built pages (test/browser/harness).
    project('browser', {
      globalSetup: '<rootDir>/test/browser/harness/global-setup.mjs',
      globalTeardown: '<rootDir>/test/browser/harness/global-teardown.mjs',
    }),
    project('cluster', {
      globalSetup: '<rootDir>/test/cluster/harness/global-setup.mjs',
      globalTeardown: '<rootDir>/test/cluster/harness/global-teardown.mjs',
    }),
    // A real kubelet, containerd and network on this machine (root; one per machine: see
    // test/realnode/harness/NOTES.md). The harness's own teardown test starts nodes of its own, so
    // it is a project without global setup, to be run in a separate jest invocation.
    project('realnode', {
      globalSetup: '<rootDir>/test/realnode/harness/global-setup.mjs',
      globalTeardown: '<rootDir>/test/realnode/harness/global-teardown.mjs',
      testPathIgnorePatterns: ['/harness-teardown\\.test\\.ts$'],
    }),
    // The kubevirt runtime's guest disk built (images/vm/build-guest-image.sh) and booted under QEMU
    // emulation with the runtime's cloud-init (test/vm/kubevirt-guest.test.ts); one VM at a time.
    project('vm'),
    // Real KubeVirt and CDI (built here, emulated: useEmulation) on the real node, and VM workspaces
    // through the installed API: `npm run test:kubevirt`, not part of `npm test` (docs/runtimes.md).
    project('kubevirt', {
      globalSetup: '<rootDir>/test/kubevirt/harness/global-setup.mjs',
      globalTeardown: '<rootDir>/test/realnode/harness/global-teardown.mjs',
    }),
    project('realnode-harness', {
      roots: ['<rootDir>/test/realnode'],
      testMatch: ['**/harness-teardown.test.ts'],
    }),
  ],
};
