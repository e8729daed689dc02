// Artifact transfers stream: a real `agentry serve` child moves objects far larger than any memory
// bound we set through its API, and its resident memory barely moves. The test's own side streams
// too (bytes generated as sent, hashed as received), so it stays small as well.
//
// Measured at steady state: V8 collects garbage Buffers only once external memory has grown by about
// 64 MiB since its last collection, so the first large transfer of a fresh process raises its RSS by
// up to that much however well it streams (observed: 62 MiB). The warm-up in beforeAll pays that once
// (a 96 MiB signed upload, a multipart upload, a download); afterwards a streaming transfer moved RSS
// by 26 MiB at most in our runs (a 512 MiB upload, as V8 sized its heap further) and usually by under
// a MiB, while a buffering one grows by the object's size (1 GiB), which large allocations take as
// fresh memory. The bound, 64 MiB, is generous on purpose:
// no noise reaches it, any buffering passes it. The 30 MiB multipart case uses 24 MiB, below its size.
//
// Sizes: a signed upload carries at most 512 MiB by default (docs/api.md#limits); the server here is
// configured for 2 GiB (AGENTRY_SIGNED_UPLOAD_MAX_BYTES) so that the 1 GiB upload goes through.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { MULTIPART, generatedChunks, send, streamedMultipart } from '../contracts/artifacts-http.js';
import { startServeProcess, stopChild } from '../support/spawn-cli.js';

const MiB = 1024 * 1024;
const KEY = `memory-test-key-${randomBytes(8).toString('hex')}`;

let dir: string;
let server: { url: string; child: ChildProcessWithoutNullStreams };
let workspace: string;

/** VmRSS and VmHWM of a process, in bytes, from /proc. */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 };
}

/** Samples the child's memory every 100 ms while `work` runs; the growth over the baseline before it. */
async function growthDuring(work: () => Promise<void>): Promise<{ rss: number; hwm: number }> {
  const pid = server.child.pid ?? 0;
  const before = await memoryOf(pid);
  let peak = before.rss;
  const sampler = setInterval(() => {
    void memoryOf(pid).then(
      (now) => (peak = Math.max(peak, now.rss)),
      () => undefined,
    );
  }, 100);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  const after = await memoryOf(pid);
  return { rss: Math.max(peak, after.rss) - before.rss, hwm: after.hwm - before.hwm };
}

/** Bytes generated as read, hashed on the way: the test never holds them. */
function generatedBody(size: number): { body: Readable; md5: () => string } {
  const hash = createHash('md5');
  const body = Readable.from(
    (function* () {
      for (const chunk of generatedChunks(size, 7)) {
        hash.update(chunk);
        yield chunk;
      }
    })(),
  );
  return { body, md5: () => hash.digest('hex') };
}

/** Downloads through the API, hashing as bytes arrive. */
function downloadDigest(path: string): Promise<{ status: number; size: number; md5: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { API_KEY: KEY } }, (res) => {
      const hash = createHash('md5');
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        hash.update(chunk);
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, size, md5: hash.digest('hex') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function put(uploadUrl: string, body: Readable, size: number, contentType: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      uploadUrl,
      { method: 'PUT', headers: { 'content-length': String(size), 'content-type': contentType } },
      (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

const UploadUrlsSchema = z.object({
  data: z.array(z.object({ uploadUrl: z.string(), contentType: z.string() })),
});

async function uploadUrl(
  filename: string,
  size: number,
): Promise<{ uploadUrl: string; contentType: string }> {
  const urls = await fetch(`${server.url}/v1/workspaces/${workspace}/artifacts/upload-url`, {
    method: 'POST',
    headers: { API_KEY: KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ files: [{ filename, size }] }),
  });
  const [signed] = UploadUrlsSchema.parse(await urls.json()).data;
  if (signed === undefined) throw new Error('no upload URL');
  return signed;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-memory-'));
  server = await startServeProcess({
    AGENTRY_DATA_DIR: dir,
    AGENTRY_API_KEY: KEY,
    AGENTRY_SIGNED_UPLOAD_MAX_BYTES: String(2048 * MiB),
  });
  const created = await fetch(`${server.url}/v1/agent-computers`, {
    method: 'POST',
    headers: { API_KEY: KEY, 'content-type': 'application/json' },
    body: '{}',
  });
  workspace = z.object({ id: z.string() }).parse(await created.json()).id;
  // Warm up every path measured below (code loading, V8's garbage headroom): see the top of the file.
  const signed = await uploadUrl('warm/big.bin', 96 * MiB);
  expect(await put(signed.uploadUrl, generatedBody(96 * MiB).body, 96 * MiB, signed.contentType)).toBe(200);
  const warm = await send(server.url, `/v1/workspaces/${workspace}/artifacts`, {
    method: 'POST',
    headers: { API_KEY: KEY, 'content-type': MULTIPART },
    body: streamedMultipart([{ filename: 'warm.bin', size: 2 * MiB }]),
  });
  expect(warm.status).toBe(201);
  expect((await downloadDigest(`/v1/workspaces/${workspace}/artifacts/warm.bin`)).size).toBe(2 * MiB);
}, 90_000);

afterAll(async () => {
  await stopChild(server.child);
  await rm(dir, { recursive: true, force: true });
});

const BOUND = 64 * MiB;

describe('artifact transfers through agentry serve', () => {
  it('streams a 1 GiB signed upload in and out with bounded server memory, bytes intact', async () => {
    const size = 1024 * MiB;
    const signed = await uploadUrl('big/upload.bin', size);
    const { body, md5 } = generatedBody(size);
    let status = 0;
    const upload = await growthDuring(async () => {
      status = await put(signed.uploadUrl, body, size, signed.contentType);
    });
    expect(status).toBe(200);
    let got = { status: 0, size: 0, md5: '' };
    const download = await growthDuring(async () => {
      got = await downloadDigest(`/v1/workspaces/${workspace}/artifacts/big%2Fupload.bin`);
    });
    expect(got).toEqual({ status: 200, size, md5: md5() });
    expect(upload.rss).toBeLessThan(BOUND);
    expect(upload.hwm).toBeLessThan(BOUND);
    expect(download.rss).toBeLessThan(BOUND);
    expect(download.hwm).toBeLessThan(BOUND);
  }, 300_000);

  it('streams a 30 MiB multipart upload with server memory growing by less than the upload', async () => {
    const size = 30 * MiB;
    let status = 0;
    const growth = await growthDuring(async () => {
      ({ status } = await send(server.url, `/v1/workspaces/${workspace}/artifacts`, {
        method: 'POST',
        headers: { API_KEY: KEY, 'content-type': MULTIPART },
        body: streamedMultipart([
          { filename: 'multi/one.bin', size: 20 * MiB, seed: 1 },
          { filename: 'multi/two.bin', size: size - 20 * MiB, seed: 2 },
        ]),
      }));
    });
    expect(status).toBe(201);
    const one = await downloadDigest(`/v1/workspaces/${workspace}/artifacts/multi/one.bin`);
    const expected = createHash('md5');
    for (const chunk of generatedChunks(20 * MiB, 1)) expected.update(chunk);
    expect(one).toEqual({ status: 200, size: 20 * MiB, md5: expected.digest('hex') });
    expect(growth.rss).toBeLessThan(24 * MiB);
    expect(growth.hwm).toBeLessThan(24 * MiB);
  }, 120_000);
});
