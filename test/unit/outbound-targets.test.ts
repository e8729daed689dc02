import { describe, expect, it } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import {
  TargetRefusedError,
  TargetUnresolvableError,
  guardedLookup,
  hostOf,
  resolveTargetHost,
  resolveWebhookTarget,
} from '../../platform/outbound-targets.js';
import type { HostLookup, ResolvedAddress } from '../../platform/outbound-targets.js';

const PUBLIC = { allowPrivate: false };
const PRIVATE_OK = { allowPrivate: true };

/** DNS replaced by a table, so no test depends on the network. */
const dns =
  (table: Record<string, ResolvedAddress[]>): HostLookup =>
  (hostname) => {
    const found = table[hostname];
    if (found === undefined) {
      return Promise.reject(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
      );
    }
    return Promise.resolve(found);
  };

async function refusal(url: string, lookup?: HostLookup): Promise<TargetRefusedError> {
  try {
    await resolveWebhookTarget(url, PUBLIC, lookup === undefined ? {} : { lookup });
  } catch (err) {
    if (err instanceof TargetRefusedError) return err;
    throw err;
  }
  throw new Error(`${url} was not refused`);
}

describe('resolveWebhookTarget: IPv4 literals', () => {
  it('accepts a public address and connects to it', async () => {
    await expect(resolveWebhookTarget('https://8.8.8.8/hook', PUBLIC)).resolves.toMatchObject({
      address: '8.8.8.8',
      family: 4,
    });
  });

  it.each([
    ['https://10.0.0.5/', 'a private address'],
    ['https://172.16.4.2/', 'a private address'],
    ['https://172.31.255.255/', 'a private address'],
    ['https://192.168.1.1/', 'a private address'],
    ['https://127.0.0.1/', 'a loopback address'],
    ['https://127.8.9.10/', 'a loopback address'],
    ['https://169.254.1.1/', 'a link-local address'],
    ['https://100.64.0.1/', 'carrier-grade NAT'],
    ['https://0.0.0.0/', 'the unspecified address'],
    ['https://255.255.255.255/', 'the broadcast address'],
    ['https://224.0.0.1/', 'a multicast address'],
    ['https://240.0.0.1/', 'a reserved address'],
    ['https://192.0.2.7/', 'a reserved address'],
  ])('refuses %s as %s', async (url, words) => {
    expect((await refusal(url)).message).toContain(words);
  });

  it('refuses the cloud metadata address by name', async () => {
    const err = await refusal('https://169.254.169.254/latest/meta-data/');
    expect(err.message).toBe(
      'webhook target 169.254.169.254 is the cloud metadata address; webhooks may reach only public addresses unless private targets are allowed',
    );
  });

  it('refuses loopback written as a single number (the URL parser normalizes it)', async () => {
    expect((await refusal('https://2130706433/')).message).toContain('127.0.0.1 is a loopback address');
  });

  it('accepts 172.32.0.1, just outside 172.16/12', async () => {
    await expect(resolveWebhookTarget('https://172.32.0.1/', PUBLIC)).resolves.toMatchObject({
      address: '172.32.0.1',
    });
  });
});

describe('resolveWebhookTarget: IPv6 literals (bracketed)', () => {
  it('accepts a public address', async () => {
    await expect(
      resolveWebhookTarget('https://[2606:4700:4700::1111]:8443/x', PUBLIC),
    ).resolves.toMatchObject({
      address: '2606:4700:4700::1111',
      family: 6,
    });
  });

  it.each([
    ['https://[::1]/', 'a loopback address'],
    ['https://[fe80::1]/', 'a link-local address'],
    ['https://[fd12:3456::1]/', 'a unique-local address'],
    ['https://[fc00::1]/', 'a unique-local address'],
    ['https://[::]/', 'the unspecified address'],
    ['https://[ff02::1]/', 'a multicast address'],
    ['https://[2001:db8::1]/', 'a reserved address'],
    ['https://[::7f00:1]/', 'IPv4-compatible'],
  ])('refuses %s as %s', async (url, words) => {
    expect((await refusal(url)).message).toContain(words);
  });

  it('refuses IPv4-mapped loopback ::ffff:127.0.0.1', async () => {
    expect((await refusal('https://[::ffff:127.0.0.1]/')).message).toContain('127.0.0.1');
    expect((await refusal('https://[::ffff:127.0.0.1]/')).message).toContain('a loopback address');
  });

  it('refuses IPv4-mapped metadata ::ffff:169.254.169.254', async () => {
    expect((await refusal('https://[::ffff:169.254.169.254]/')).message).toContain(
      'the cloud metadata address',
    );
  });

  it('accepts IPv4-mapped public ::ffff:8.8.8.8 and connects over IPv4', async () => {
    await expect(resolveWebhookTarget('https://[::ffff:8.8.8.8]/', PUBLIC)).resolves.toMatchObject({
      address: '8.8.8.8',
      family: 4,
    });
  });
});

describe('resolveWebhookTarget: host names', () => {
  it('refuses localhost without asking DNS', async () => {
    const neverAsked: HostLookup = () => Promise.reject(new Error('DNS was asked'));
    const err = await refusal('https://localhost:8443/hook', neverAsked);
    expect(err.message).toContain('localhost is a loopback name');
  });

  it('refuses a *.localhost name', async () => {
    expect((await refusal('https://api.localhost/')).message).toContain('loopback name');
  });

  it('names the host and the refused address it resolved to', async () => {
    const lookup = dns({ 'internal.example': [{ address: '10.0.0.5', family: 4 }] });
    const err = await refusal('https://internal.example/hook', lookup);
    expect(err.message).toBe(
      'webhook target 10.0.0.5 (from internal.example) is a private address; webhooks may reach only public addresses unless private targets are allowed',
    );
  });

  it('refuses a host when ANY of its addresses is refused, even after a public one', async () => {
    const lookup = dns({
      'mixed.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    expect((await refusal('https://mixed.example/', lookup)).message).toContain('::1 (from mixed.example)');
  });

  it('returns the first address of a public host, to pin the connection to it', async () => {
    const lookup = dns({
      'hooks.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    });
    const target = await resolveWebhookTarget('https://hooks.example/in?x=1', PUBLIC, { lookup });
    expect(target).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(target.url.href).toBe('https://hooks.example/in?x=1');
  });

  it('refuses a host that does not resolve, as unresolvable', async () => {
    const err = await refusal('https://nowhere.example/', dns({}));
    expect(err).toBeInstanceOf(TargetUnresolvableError);
    expect(err.message).toContain('nowhere.example does not resolve (ENOTFOUND)');
  });

  it('gives up on a lookup that never answers, as unresolvable, within its bound', async () => {
    const silent: HostLookup = () => new Promise(() => undefined);
    const attempt = resolveWebhookTarget('https://slow.example/', PUBLIC, {
      lookup: silent,
      lookupTimeoutMs: 50,
    });
    await expect(attempt).rejects.toBeInstanceOf(TargetUnresolvableError);
    await expect(attempt).rejects.toThrow('slow.example does not resolve (timed out)');
  });
});

describe('resolveWebhookTarget: schemes', () => {
  it('refuses plain http to a public address unless private targets are allowed', async () => {
    expect((await refusal('http://8.8.8.8/')).message).toContain('must use https');
    await expect(resolveWebhookTarget('http://8.8.8.8/', PRIVATE_OK)).resolves.toMatchObject({
      address: '8.8.8.8',
    });
  });

  it('refuses other schemes even when private targets are allowed', async () => {
    await expect(resolveWebhookTarget('ftp://8.8.8.8/', PRIVATE_OK)).rejects.toThrow(
      'must use https, not ftp',
    );
    await expect(resolveWebhookTarget('file:///etc/passwd', PRIVATE_OK)).rejects.toThrow(TargetRefusedError);
  });

  it('refuses text that is not a URL', async () => {
    expect((await refusal('not a url')).message).toBe('webhook target is not a valid URL');
  });
});

describe('resolveWebhookTarget: allowPrivate', () => {
  it('accepts private, loopback and metadata addresses over http', async () => {
    for (const [url, address] of [
      ['http://10.0.0.5:9000/', '10.0.0.5'],
      ['http://127.0.0.1/', '127.0.0.1'],
      ['http://[::1]/', '::1'],
      ['http://169.254.169.254/', '169.254.169.254'],
    ] as const) {
      await expect(resolveWebhookTarget(url, PRIVATE_OK)).resolves.toMatchObject({ address });
    }
  });

  it('resolves localhost with the system resolver', async () => {
    const target = await resolveWebhookTarget('http://localhost:1/', PRIVATE_OK);
    expect(['127.0.0.1', '::1']).toContain(target.address);
  });
});

const DATASETS = { noun: 'dataset source', plural: 'dataset downloads' };

/** The host a client connects to once the URL parser has normalized it (no connection is made). */
const checkedHost = (url: string): Promise<ResolvedAddress> =>
  resolveTargetHost(hostOf(new URL(url)), PUBLIC, { subject: DATASETS, lookup: dns({}) });

describe('resolveTargetHost: address classes, by classification alone', () => {
  it.each([
    ['the cloud metadata address', 'https://169.254.169.254/x.csv', /the cloud metadata address/],
    [
      'the metadata address in decimal',
      'https://2852039166/x.csv',
      /169\.254\.169\.254 is the cloud metadata/,
    ],
    ['the metadata address in hex', 'https://0xa9fea9fe/x.csv', /169\.254\.169\.254 is the cloud metadata/],
    ['the metadata address in octal', 'https://0251.0376.0251.0376/x.csv', /169\.254\.169\.254/],
    ['10/8', 'https://10.20.30.40/x.csv', /a private address/],
    ['172.16/12 (start)', 'https://172.16.0.1/x.csv', /a private address/],
    ['172.16/12 (end)', 'https://172.31.255.255/x.csv', /a private address/],
    ['192.168/16', 'https://192.168.1.1/x.csv', /a private address/],
    ['fc00::/7', 'https://[fd12:3456::1]/x.csv', /a unique-local address/],
    ['IPv4-mapped private IPv6', 'https://[::ffff:10.0.0.1]/x.csv', /10\.0\.0\.1 (.*) is a private address/],
    ['IPv4-mapped metadata IPv6', 'https://[::ffff:a9fe:a9fe]/x.csv', /the cloud metadata address/],
    ['0.0.0.0', 'https://0.0.0.0/x.csv', /the unspecified address/],
    ['0 (0.0.0.0 in decimal)', 'https://0/x.csv', /the unspecified address/],
    ['link-local IPv6', 'https://[fe80::1]/x.csv', /a link-local address/],
    ['carrier-grade NAT', 'https://100.64.0.1/x.csv', /carrier-grade NAT/],
  ])('refuses %s for a dataset download', async (_what, url, message) => {
    const refused = await checkedHost(url).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TargetRefusedError);
    expect((refused as Error).message).toMatch(message);
    expect((refused as Error).message).toContain('dataset downloads may reach only public addresses');
  });

  it('accepts a public address', async () => {
    await expect(checkedHost('https://93.184.215.14/x.csv')).resolves.toEqual({
      address: '93.184.215.14',
      family: 4,
    });
  });
});

/** Calls a lookup as Node's net module would, and answers what it called back with. */
function lookUp(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  all: boolean,
): Promise<{
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number | undefined;
}> {
  return new Promise((resolve) => {
    lookup(hostname, { all }, (err, address, family) => {
      resolve({ err, address, family });
    });
  });
}

describe('guardedLookup: the lookup of the lake’s S3 agents', () => {
  const lookup = guardedLookup(PUBLIC, {
    subject: DATASETS,
    lookup: dns({
      'internal.example': [{ address: '10.0.0.5', family: 4 }],
      'rebind.example': [
        { address: '93.184.215.14', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
      'public.example': [{ address: '93.184.215.14', family: 4 }],
    }),
  });

  it('fails a name that resolves to a private address, so no connection is made', async () => {
    const { err } = await lookUp(lookup, 'internal.example', false);
    expect(err?.code).toBe('EREFUSEDTARGET');
    expect(err?.message).toContain('dataset source 10.0.0.5 (from internal.example) is a private address');
  });

  it('fails a name when any of its addresses is refused', async () => {
    const { err } = await lookUp(lookup, 'rebind.example', true);
    expect(err?.message).toContain('the cloud metadata address');
  });

  it('answers the checked address, in the form the caller asked for', async () => {
    expect(await lookUp(lookup, 'public.example', false)).toEqual({
      err: null,
      address: '93.184.215.14',
      family: 4,
    });
    expect((await lookUp(lookup, 'public.example', true)).address).toEqual([
      { address: '93.184.215.14', family: 4 },
    ]);
  });
});

describe('resolveTargetHost: refuseMetadata with private targets allowed, by classification alone', () => {
  const EGRESS = { noun: 'egress target', plural: 'workspaces' };
  const policy = { allowPrivate: true, refuseMetadata: true };
  const check = (host: string, table: Record<string, ResolvedAddress[]>): Promise<ResolvedAddress> =>
    resolveTargetHost(host, policy, { subject: EGRESS, lookup: dns(table) });

  it.each([
    ['169.254.169.254', 4],
    ['169.254.0.1', 4],
    ['fd00:ec2::254', 6],
    ['::ffff:169.254.169.254', 6],
  ] as const)('refuses a name resolving to the metadata range address %s', async (address, family) => {
    await expect(check('meta.test', { 'meta.test': [{ address, family }] })).rejects.toThrow(
      /the cloud metadata range/,
    );
  });

  it('still allows loopback and private addresses', async () => {
    await expect(
      check('inside.test', { 'inside.test': [{ address: '10.1.2.3', family: 4 }] }),
    ).resolves.toEqual({ address: '10.1.2.3', family: 4 });
  });

  it('refuses a name when any one of its addresses is metadata', async () => {
    await expect(
      check('mixed.test', {
        'mixed.test': [
          { address: '10.1.2.3', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ],
      }),
    ).rejects.toThrow(TargetRefusedError);
  });
});
