import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Git's smart HTTP protocol on 127.0.0.1: `git http-backend` (CGI) behind a tiny node server,
 * serving bare repositories under `root`. Tests fetch from it as from any git host.
 */
export interface GitHttpServer {
  url: string;
  root: string;
  /** Creates `<root>/<name>.git` holding one commit of `files` (path → content) on `main`. */
  publish(name: string, files: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

function cgiEnv(root: string, method: string, url: URL, contentType: string | undefined): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: method,
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: contentType ?? '',
    REMOTE_ADDR: '127.0.0.1',
  };
}

export async function startGitHttpServer(): Promise<GitHttpServer> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-git-http-'));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const child = spawn('git', ['http-backend'], {
      env: cgiEnv(root, req.method ?? 'GET', url, req.headers['content-type']),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(child.stdin);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', () => {
      const output = Buffer.concat(chunks);
      const split = output.indexOf('\r\n\r\n');
      const headerEnd = split < 0 ? output.indexOf('\n\n') : split;
      const gap = split < 0 ? 2 : 4;
      const headers = output.subarray(0, Math.max(headerEnd, 0)).toString('utf8');
      let status = 200;
      for (const line of headers.split(/\r?\n/)) {
        const [name = '', ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else if (name !== '') res.setHeader(name, value);
      }
      res.statusCode = status;
      res.end(headerEnd < 0 ? output : output.subarray(headerEnd + gap));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    root,
    async publish(name, files) {
      const work = await mkdtemp(join(tmpdir(), 'agentry-git-work-'));
      try {
        for (const [path, content] of Object.entries(files)) {
          await mkdir(dirname(join(work, path)), { recursive: true });
          await writeFile(join(work, path), content);
        }
        const git = (...args: string[]) => run('git', args, { cwd: work });
        await git('init', '--quiet', '-b', 'main');
        await git('add', '.');
        await git(
          '-c',
          'user.name=test',
          '-c',
          'user.email=test@example.com',
          'commit',
          '--quiet',
          '-m',
          'skill',
        );
        await run('git', ['clone', '--quiet', '--bare', work, join(root, `${name}.git`)]);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
      return `http://127.0.0.1:${port}/${name}.git`;
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      await rm(root, { recursive: true, force: true });
    },
  };
}
