// AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT: which S3 endpoints `auto` takes clients to be able to reach
// (classified from the URL alone, nothing is resolved or connected to), and what each setting does.
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { clientsCanReach, downloadRedirectTarget } from '../../platform/objectstore/download-redirect.js';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';

describe('clientsCanReach', () => {
  it('takes AWS itself (no endpoint) to be reachable', () => {
    expect(clientsCanReach(undefined)).toBe(true);
  });

  it.each(['https://s3.example.com', 'https://minio.example.org:9000', 'http://52.216.8.1:9000'])(
    'takes a public name or address to be reachable: %s',
    (endpoint) => {
      expect(clientsCanReach(endpoint)).toBe(true);
    },
  );

  it.each([
    'http://127.0.0.1:5000',
    'http://[::1]:9000',
    'http://localhost:9000',
    'http://10.0.0.5:9000',
    'http://192.168.1.20',
    'http://169.254.169.254',
    'http://[fd00::1]:9000',
    'http://minio:9000',
    'http://minio.storage.svc:9000',
    'http://minio.storage.svc.cluster.local:9000',
    'http://nas.local',
    'http://s3.corp.internal',
  ])(
    'takes a loopback, private, link-local or cluster-internal endpoint to be unreachable: %s',
    (endpoint) => {
      expect(clientsCanReach(endpoint)).toBe(false);
    },
  );
});

describe('downloadRedirectTarget', () => {
  const s3 = new S3ObjectStore({ bucket: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:1' });
  const settings = (redirect: 'auto' | 'always' | 'never', endpoint?: string) => ({
    AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT: redirect,
    AGENTRY_S3_ENDPOINT: endpoint,
  });

  it('redirects to the S3 store with auto when clients can reach its endpoint', () => {
    expect(downloadRedirectTarget(settings('auto', 'https://s3.example.com'), s3)).toBe(s3);
    expect(downloadRedirectTarget(settings('auto'), s3)).toBe(s3);
  });

  it('streams with auto when the endpoint is cluster-internal', () => {
    expect(downloadRedirectTarget(settings('auto', 'http://minio.storage.svc:9000'), s3)).toBeUndefined();
  });

  it('redirects with always whatever the endpoint, and never with never', () => {
    expect(downloadRedirectTarget(settings('always', 'http://minio:9000'), s3)).toBe(s3);
    expect(downloadRedirectTarget(settings('never'), s3)).toBeUndefined();
  });

  it('always streams from the directory store, whose signed URLs are the API itself', () => {
    const directory = new FilesystemObjectStore({
      root: '/nonexistent-agentry-test',
      baseUrl: 'http://127.0.0.1:1',
      signingSecret: randomBytes(32),
    });
    expect(downloadRedirectTarget(settings('always'), directory)).toBeUndefined();
  });
});
