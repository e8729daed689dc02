// The benchmarks' own HTTP servers (receivers, floors): on loopback, on a port the system picks.
import type { Server } from 'node:http';

/** Starts `server` on 127.0.0.1 and resolves with its port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the server has no port');
  return address.port;
}

/** Closes `server` and every connection it still holds. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}
