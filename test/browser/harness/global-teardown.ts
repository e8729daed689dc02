import { WEB_ROOT_ENV, removePages } from './built-pages.js';

export default async function globalTeardown(): Promise<void> {
  const root = process.env[WEB_ROOT_ENV];
  if (root !== undefined && root !== '') await removePages(root);
}
