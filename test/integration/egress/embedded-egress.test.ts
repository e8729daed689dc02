// The embedded default runs the egress proxy in-process: a prompt's curl goes through it with the
// prompt's token (the proxy variables `agentry serve` sets), reaching an allowed host and refused
// (403) for another. Loopback stays in NO_PROXY, so `--noproxy ''` sends these through the proxy.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { TaskRecordSchema } from '../../../api/task/present.js';
import { startServeProcess, stopChild } from '../../support/spawn-cli.js';
import { until } from '../../support/until.js';

const KEY = 'egress-embedded-key-0123456789abcdef';
const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

let dataDir = '';
let serve: { url: string; child: ChildProcessWithoutNullStreams } | undefined;
let allowed: Server;
let allowedPort = 0;
let otherPort = 0;
let requestsSeen = 0;

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'agentry-egress-serve-'));
  allowed = createServer((req, res) => {
    requestsSeen += 1;
    res.end(`reached with proxy-authorization ${req.headers['proxy-authorization'] ?? 'absent'}`);
  });
  allowedPort = await listen(allowed);
  // A second port nobody allows (nothing needs to listen: the proxy refuses before connecting).
  otherPort = allowedPort === 65535 ? allowedPort - 1 : allowedPort + 1;
  serve = await startServeProcess({
    AGENTRY_DATA_DIR: dataDir,
    AGENTRY_API_KEY: KEY,
    AGENTRY_EGRESS_PRIVATE_TARGETS: 'true',
    AGENTRY_EGRESS_ALLOW: JSON.stringify([{ host: 'localhost', ports: [allowedPort] }]),
  });
}, 90_000);

afterAll(async () => {
  if (serve !== undefined) await stopChild(serve.child);
  allowed.closeAllConnections();
  await new Promise<void>((resolve) =>
    allowed.close(() => {
      resolve();
    }),
  );
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('egress in the embedded default', () => {
  it("a prompt's curl reaches an allowed loopback host through the in-process proxy, and is refused elsewhere", async () => {
    const url = serve?.url ?? '';
    const created = await fetch(`${url}/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        executor: 'shell',
        prompt: [
          `curl -sS --noproxy '' --max-time 20 http://localhost:${allowedPort}/ > allowed.txt 2>&1`,
          `curl -sS --noproxy '' --max-time 20 -o /dev/null -w '%{http_code}' http://localhost:${otherPort}/ > other.txt 2>&1`,
          'echo "$HTTPS_PROXY" | sed -E "s#//prompt:agp1\\.[^@]+@#//prompt:TOKEN@#" > proxy.txt',
        ].join('\n'),
      }),
    });
    expect(created.status).toBe(201);
    const { id } = z.looseObject({ id: z.string() }).parse(await created.json());
    const record = await until(
      'the task to finish',
      async () => {
        const res = await fetch(`${url}/v1/tasks/${id}`, { headers });
        const task = TaskRecordSchema.parse(await res.json());
        return task.status === 'running' ? undefined : task;
      },
      120_000,
      300,
    );
    expect([record.status, record.prompts[0]?.error]).toEqual(['completed', null]);
    const code = join(dataDir, 'workspaces', 'agentry-org-default', record.workspaceId, 'code');
    expect(await readFile(join(code, 'allowed.txt'), 'utf8')).toBe('reached with proxy-authorization absent');
    expect(await readFile(join(code, 'other.txt'), 'utf8')).toBe('403');
    expect(await readFile(join(code, 'proxy.txt'), 'utf8')).toMatch(
      /^http:\/\/prompt:TOKEN@127\.0\.0\.1:\d+\n$/,
    );
    expect(requestsSeen).toBe(1);
  }, 180_000);
});
