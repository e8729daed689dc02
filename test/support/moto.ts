import { spawn } from 'node:child_process';
import { S3Client } from '@aws-sdk/client-s3';
import type { Dataset } from '../../crds/context-lake/types.js';
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

/** The key pair a test gives moto (which checks none): its S3 client and its datasets use the same. */
export const MOTO_CREDENTIALS = { accessKeyId: 'moto-key', secretAccessKey: 'moto-secret' } as const;

const MOTO_REGION = 'us-east-1';

/** An S3 client of moto at `url`, with path-style addressing (moto's buckets have no host names). */
export function motoS3Client(url: string): S3Client {
  return new S3Client({
    endpoint: url,
    region: MOTO_REGION,
    forcePathStyle: true,
    credentials: MOTO_CREDENTIALS,
  });
}

/** The dataset params that reach moto at `url`: moto serves plain http only. */
export const motoEndpointParams = (url: string): Record<string, string> => ({
  s3_endpoint: url,
  allow_http: 'true',
});

/**
 * A dataset of `s3://bucket/path` on moto at `url`, read with MOTO_CREDENTIALS; `params` add to
 * those (file_format, refresh_check_interval, ...) or override them.
 */
export function motoDataset(
  moto: { url: string; bucket: string },
  name: string,
  path: string,
  params: Record<string, string> = {},
): Dataset {
  return {
    name,
    from: `s3://${moto.bucket}/${path}`,
    params: {
      s3_auth: 'key',
      s3_key: MOTO_CREDENTIALS.accessKeyId,
      s3_secret: MOTO_CREDENTIALS.secretAccessKey,
      ...motoEndpointParams(moto.url),
      s3_region: MOTO_REGION,
      ...params,
    },
  };
}
