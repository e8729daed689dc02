// Jest global setup of the realnode project: a real node with Agentry installed (deployment.ts).
import { setUpRealNodeProject } from './project-setup.js';

export default async function globalSetup(): Promise<void> {
  await setUpRealNodeProject();
}
