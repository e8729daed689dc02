// Object storage that accepts connections and never answers (an overloaded endpoint, a black-holed
// route) must not hold an API request for ever: each S3 call ends with `Unavailable` after its
// bound. A loopback server plays the silent endpoint.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { isObjectStoreError } from '../../platform/objectstore/types.js';

let silent: Server;
const sockets = new Set<Socket>();
let endpoint: string;

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket); // read nothing, answer nothing
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => {
    silent.close(() => {
      resolve();
    });
  });
});

it('ends a call to an endpoint that never answers with Unavailable after its bound', async () => {
  const store = new S3ObjectStore({
    bucket: 'silent',
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestTimeoutMs: 300,
  });
  try {
    const outcome = await store.head('orgs/x/artifacts/a.txt').then(
      () => 'answered',
      (err: unknown) => (isObjectStoreError(err, 'Unavailable') ? 'unavailable' : String(err)),
    );
    expect(outcome).toBe('unavailable');
  } finally {
    store.close();
  }
}, 20_000);
