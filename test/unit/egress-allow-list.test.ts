import { describe, expect, it } from '@jest/globals';
import { decide, hostMatches } from '../../egress/allow-list.js';

describe('egress allow list: host matching', () => {
  it('matches an exact name only itself, ignoring case and a trailing dot', () => {
    expect(hostMatches('github.com', 'GitHub.COM.')).toBe(true);
    expect(hostMatches('github.com', 'api.github.com')).toBe(false);
    expect(hostMatches('github.com', 'evilgithub.com')).toBe(false);
  });

  it('matches a wildcard against subdomains at any depth, never the bare name', () => {
    expect(hostMatches('*.github.com', 'api.github.com')).toBe(true);
    expect(hostMatches('*.github.com', 'a.b.github.com')).toBe(true);
    expect(hostMatches('*.github.com', 'github.com')).toBe(false);
    expect(hostMatches('*.github.com', 'evilgithub.com')).toBe(false);
  });
});

describe('egress allow list: ports', () => {
  it('allows 443 and 80 for a rule without ports, as TLS or HTTP only', () => {
    const rules = [{ host: 'github.com' }];
    expect(decide(rules, 'github.com', 443)).toEqual({ allowed: true, explicitPort: false });
    expect(decide(rules, 'github.com', 80)).toEqual({ allowed: true, explicitPort: false });
    expect(decide(rules, 'github.com', 22)).toEqual({ allowed: false });
  });

  it('allows exactly the listed ports, as any protocol', () => {
    const rules = [{ host: 'git.example.com', ports: [22] }];
    expect(decide(rules, 'git.example.com', 22)).toEqual({ allowed: true, explicitPort: true });
    expect(decide(rules, 'git.example.com', 443)).toEqual({ allowed: false });
  });

  it('takes the union of rules: an explicit port wins over a default one for the same host', () => {
    const rules = [{ host: 'example.com' }, { host: '*.com', ports: [443] }];
    expect(decide(rules, 'example.com', 443)).toEqual({ allowed: true, explicitPort: true });
    expect(decide(rules, 'example.com', 80)).toEqual({ allowed: true, explicitPort: false });
  });
});
