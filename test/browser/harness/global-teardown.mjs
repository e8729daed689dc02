// See global-setup.mjs: the same bridge into the TypeScript harness.
import { register } from 'node:module';

register('../../support/swc-loader.mjs', import.meta.url);

export default async function globalTeardown() {
  const { default: teardown } = await import('./global-teardown.ts');
  await teardown();
}
