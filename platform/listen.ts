import type { Server } from 'node:net';

/** The settings that choose a listener's address, named in its start-up error. */
export interface ListenSettings {
  host: string;
  port: number;
  /** The environment variable holding `port`, e.g. AGENTRY_PORT. */
  portSetting: string;
  /** The environment variable holding `host`, e.g. AGENTRY_HOST. */
  hostSetting: string;
}

/**
 * A listener that could not start. Its message is one line naming the setting to change, fit for
 * a terminal (the cause keeps the system error).
 */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** An IPv6 literal needs brackets inside a URL. */
export const hostInUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host);

const errorCodeOf = (err: unknown): unknown =>
  typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;

function listenFailure(err: unknown, settings: ListenSettings): ListenError {
  const { host, port, portSetting, hostSetting } = settings;
  const where = `${hostInUrl(host)}:${port}`;
  switch (errorCodeOf(err)) {
    case 'EADDRINUSE':
      return new ListenError(`port ${port} is in use (${where}); set ${portSetting} to another port`, {
        cause: err,
      });
    case 'EACCES':
      return new ListenError(
        `no permission to listen on port ${port} (${where}); set ${portSetting} to a port above 1023`,
        { cause: err },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ListenError(
        `cannot listen on ${host}: not an address of this machine; set ${hostSetting} to one`,
        { cause: err },
      );
    default:
      return new ListenError(`cannot listen on ${where}; check ${hostSetting} and ${portSetting}`, {
        cause: err,
      });
  }
}

/**
 * Listens on the configured address and resolves with the port bound (a configured 0 picks one);
 * a failure rejects with a ListenError naming the setting to change.
 */
export async function listenOn(server: Server, settings: ListenSettings): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const fail = (err: unknown): void => {
      reject(listenFailure(err, settings));
    };
    server.once('error', fail);
    server.listen(settings.port, settings.host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : settings.port;
}
