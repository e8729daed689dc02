// Jest global setup of the browser project: the web pages are built once per run, into a temporary
// directory (dist/web stays as it is), and every test file's server serves them.
import { WEB_ROOT_ENV, buildPages } from './built-pages.js';

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  // Workers start after global setup and inherit the environment: this is how tests find the pages.
  process.env[WEB_ROOT_ENV] = await buildPages();
  process.stderr.write(`\nweb pages built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
