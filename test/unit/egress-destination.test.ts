// The proxy's destination check, by classification alone: DNS is a table, nothing is connected to.
import { describe, expect, it } from '@jest/globals';
import { checkDestination, parseAuthority } from '../../egress/destination.js';
import type { HostLookup } from '../../platform/outbound-targets.js';

const table =
  (entries: Record<string, string[]>): HostLookup =>
  (hostname) => {
    const found = entries[hostname];
    if (found === undefined)
      return Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));
    return Promise.resolve(found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };

const rules = [{ host: 'allowed.example' }, { host: '*.corp.example' }];
const lookup = table({
  'allowed.example': ['93.184.216.34'],
  'db.corp.example': ['10.0.0.7'],
  'meta.corp.example': ['169.254.169.254'],
});

describe('checkDestination', () => {
  it('allows a listed name that resolves to a public address, pinned to it', async () => {
    await expect(
      checkDestination(rules, 'allowed.example', 443, { allowPrivateTargets: false, lookup }),
    ).resolves.toEqual({
      allowed: true,
      host: 'allowed.example',
      port: 443,
      address: '93.184.216.34',
      explicitPort: false,
    });
  });

  it('refuses a name on no list as not_allowed, without asking DNS', async () => {
    const neverAsked: HostLookup = () => Promise.reject(new Error('DNS must not be asked'));
    await expect(
      checkDestination(rules, 'other.example', 443, { allowPrivateTargets: false, lookup: neverAsked }),
    ).resolves.toMatchObject({ allowed: false, reason: 'not_allowed' });
  });

  it('refuses an IP literal whatever the lists say', async () => {
    await expect(
      checkDestination([{ host: 'allowed.example' }], '93.184.216.34', 443, {
        allowPrivateTargets: true,
        lookup,
      }),
    ).resolves.toMatchObject({ allowed: false, reason: 'not_allowed' });
  });

  it('refuses a listed name resolving to a private address as private_address, unless private targets are allowed', async () => {
    await expect(
      checkDestination(rules, 'db.corp.example', 443, { allowPrivateTargets: false, lookup }),
    ).resolves.toMatchObject({ allowed: false, reason: 'private_address' });
    await expect(
      checkDestination(rules, 'db.corp.example', 443, { allowPrivateTargets: true, lookup }),
    ).resolves.toMatchObject({ allowed: true, address: '10.0.0.7' });
  });

  it('refuses the metadata address even where private targets are allowed', async () => {
    await expect(
      checkDestination(rules, 'meta.corp.example', 80, { allowPrivateTargets: true, lookup }),
    ).resolves.toMatchObject({ allowed: false, reason: 'private_address' });
  });

  it('refuses a listed name that does not resolve as unresolvable', async () => {
    await expect(
      checkDestination(rules, 'gone.corp.example', 443, { allowPrivateTargets: false, lookup }),
    ).resolves.toMatchObject({ allowed: false, reason: 'unresolvable' });
  });
});

describe('parseAuthority', () => {
  it('reads host:port and [v6]:port, lowercased', () => {
    expect(parseAuthority('GitHub.com:443')).toEqual({ host: 'github.com', port: 443 });
    expect(parseAuthority('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
  });

  it('refuses a missing or out-of-range port and junk', () => {
    for (const text of ['github.com', 'github.com:0', 'github.com:70000', 'a b:443', '/x:443', ''])
      expect(parseAuthority(text)).toBeUndefined();
  });
});
