import { spawn } from 'node:child_process';
import { freeLoopbackPort } from './free-port.js';
import { pypiTool } from './pypi-tool.js';
import { until } from './until.js';

/** The moto the cluster harness pins (test/cluster/harness/build-binaries.sh), from the same tool cache. */
const MOTO_VERSION = '5.2.5';

export interface RunningMoto {
  /** `http://127.0.0.1:PORT`: S3 and SQS. */
  url: string;
  stop(): Promise<void>;
}

/** moto (S3, SQS) on a loopback port for one test file; stop() ends that process. */
export async function startMoto(): Promise<RunningMoto> {
  const server = await pypiTool('moto', MOTO_VERSION, 'moto_server', ['server']);
  const port = await freeLoopbackPort();
  const child = spawn(server, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await until('moto', async () =>
      (await fetch(`${url}/moto-api/`).catch(() => undefined))?.ok ? true : undefined,
    );
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill();
      await exited;
    },
  };
}
