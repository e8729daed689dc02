// Jest loads global setup outside its module system (no moduleNameMapper, CommonJS require), so
// this plain ES module registers the repository's swc loader and imports the TypeScript harness.
import { register } from 'node:module';

register('../../support/swc-loader.mjs', import.meta.url);

export default async function globalSetup() {
  const { default: setup } = await import('./global-setup.ts');
  await setup();
}
