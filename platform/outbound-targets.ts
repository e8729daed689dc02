import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The one SSRF guard of every outbound connection a user's configuration can aim: webhooks
 * (docs/api.md#webhooks) and the context lake's dataset downloads (s3_endpoint, https datasets). A target
 * may be only a public address, unless the installation or its organization allows private targets
 * (tests, the embedded default). A URL is checked when it is registered and again before every
 * connection (DNS can change), and the connection goes to the address that was checked, so a name
 * cannot resolve to a public address for the check and to a private one for the connection (DNS
 * rebinding).
 */

/** The target is not allowed (scheme, address range) or cannot be resolved. Never retried in a hot loop. */
export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
}

/** The target's host did not resolve (a refusal too: there is nothing to connect to). */
export class TargetUnresolvableError extends TargetRefusedError {
  override name = 'TargetUnresolvableError';
}

export interface TargetPolicy {
  /** Loopback, private, link-local and other non-public addresses, and plain http, are allowed. */
  allowPrivate: boolean;
  /**
   * Even with allowPrivate, refuse cloud metadata: all of IPv4 link-local 169.254.0.0/16 (every
   * cloud's metadata and its neighbours) and fd00:ec2::254 (the egress proxy: a workspace must
   * never reach credentials of the node).
   */
  refuseMetadata?: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (tests replace DNS with this). */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface ResolveOptions {
  /** Default: `dns.lookup(hostname, { all: true })` (the system resolver, /etc/hosts included). */
  lookup?: HostLookup;
  /** How long a lookup may take before the host counts as unresolvable. Default 10 s. */
  lookupTimeoutMs?: number;
}

/** The system resolver retries for a long time on an unreachable DNS server; a caller waits this long. */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 10_000;

/** The lookup's answer, or a rejection once `ms` have passed (the lookup itself cannot be cancelled). */
function withinTime<T>(lookup: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'timed out' }));
    }, ms);
  });
  return Promise.race([lookup, expired]).finally(() => {
    clearTimeout(timer);
  });
}

/** What is reaching out, in messages: `webhook target 10.0.0.5 is ...; webhooks may reach ...`. */
export interface TargetSubject {
  noun: string;
  plural: string;
}

export const WEBHOOK_TARGET: TargetSubject = { noun: 'webhook target', plural: 'webhooks' };

const systemLookup: HostLookup = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** Why each non-public range is refused, in words a webhook owner understands. */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  ipv4Compatible: 'an IPv4-compatible IPv6 address (deprecated, may reach IPv4 hosts)',
};

/** 169.254.169.254: the instance metadata service of every major cloud (credentials!). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);

/** Cloud metadata in the wide sense: IPv4 link-local (169.254.0.0/16) and AWS's IPv6 metadata address. */
export function isMetadataAddress(address: string): boolean {
  const { address: plain, family } = classifyAddress(address);
  if (family === 6) return plain === 'fd00:ec2::254';
  return ipaddr.IPv4.parse(plain).match(ipaddr.IPv4.parseCIDR('169.254.0.0/16'));
}

/** `::/96` (except `::` and `::1`): IPv4-compatible IPv6, which ipaddr.js calls unicast. */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  return parts.slice(0, 6).every((part) => part === 0) && (parts[6] ?? 0) !== 0;
}

interface Classified {
  /** The address to connect to (an IPv4-mapped IPv6 address becomes its IPv4 address). */
  address: string;
  family: 4 | 6;
  /** undefined when public. */
  refusal: string | undefined;
}

/** Classifies one address with ipaddr.js: only `unicast` (v4 or v6) is public. */
export function classifyAddress(text: string): Classified {
  let parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const family = parsed.kind() === 'ipv4' ? 4 : 6;
  const address = family === 6 ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
  let range: string = parsed.range();
  if (range === 'unicast' && family === 6 && isIpv4Compatible(parsed as ipaddr.IPv6))
    range = 'ipv4Compatible';
  if (range === 'unicast') return { address, family, refusal: undefined };
  const refusal = METADATA_ADDRESSES.has(address)
    ? 'the cloud metadata address'
    : (RANGE_WORDS[range] ?? `a non-public address (${range})`);
  return { address, family, refusal };
}

/** The URL's host without the brackets of an IPv6 literal. */
const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** RFC 6761: `localhost` and `*.localhost` are loopback, whatever a resolver says. */
const isLocalhostName = (host: string): boolean => /(^|\.)localhost\.?$/i.test(host);

function parseTarget(text: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new TargetRefusedError('webhook target is not a valid URL', { cause: err });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && policy.allowPrivate) return url;
  throw new TargetRefusedError(
    url.protocol === 'http:'
      ? `webhook target ${url.host} must use https (plain http is allowed only where private targets are)`
      : `webhook target must use https, not ${url.protocol.replace(/:$/, '')}`,
  );
}

async function addressesOf(
  host: string,
  lookup: HostLookup,
  subject: TargetSubject,
  timeoutMs: number,
): Promise<readonly ResolvedAddress[]> {
  if (isIP(host) !== 0) return [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  let found: readonly ResolvedAddress[];
  try {
    found = await withinTime(lookup(host), timeoutMs);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = typeof code === 'string' ? code : 'lookup failed';
    throw new TargetUnresolvableError(`${subject.noun} host ${host} does not resolve (${why})`, {
      cause: err,
    });
  }
  if (found.length === 0) throw new TargetUnresolvableError(`${subject.noun} host ${host} has no addresses`);
  return found;
}

const refusedMessage = (subject: TargetSubject, host: string, address: string, refusal: string): string =>
  `${subject.noun} ${address}${address === host ? '' : ` (from ${host})`} is ${refusal}; ` +
  `${subject.plural} may reach only public addresses unless private targets are allowed`;

/**
 * Resolves a host (all addresses, dns.lookup {all:true}; an IP literal as itself) and refuses
 * loopback, private (10/8, 172.16/12, 192.168/16), link-local (169.254/16 incl. the 169.254.169.254
 * metadata address, fe80::/10), unique-local (fc00::/7), CGNAT 100.64/10, unspecified, broadcast,
 * multicast, reserved, IPv4-mapped IPv6 of those, unless allowPrivate; a host resolving to ANY
 * refused address is refused. Returns the address to connect to (the first), so that the
 * connection is pinned to the checked address.
 */
export async function resolveTargetHost(
  host: string,
  policy: TargetPolicy,
  options: ResolveOptions & { subject: TargetSubject },
): Promise<ResolvedAddress> {
  const { subject } = options;
  if (!policy.allowPrivate && isLocalhostName(host)) {
    throw new TargetRefusedError(refusedMessage(subject, host, host, 'a loopback name'));
  }
  const found = await addressesOf(
    host,
    options.lookup ?? systemLookup,
    subject,
    options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS,
  );
  const classified = found.map(({ address }) => classifyAddress(address));
  if (policy.allowPrivate && policy.refuseMetadata === true) {
    const metadata = classified.find((entry) => isMetadataAddress(entry.address));
    if (metadata !== undefined)
      throw new TargetRefusedError(
        refusedMessage(subject, host, metadata.address, 'the cloud metadata range'),
      );
  }
  if (!policy.allowPrivate) {
    const refused = classified.find((entry) => entry.refusal !== undefined);
    if (refused?.refusal !== undefined) {
      throw new TargetRefusedError(refusedMessage(subject, host, refused.address, refused.refusal));
    }
  }
  const first = classified[0];
  if (first === undefined) throw new TargetUnresolvableError(`${subject.noun} host ${host} has no addresses`);
  return { address: first.address, family: first.family };
}

/** The URL's host as a connection needs it (no IPv6 brackets), and as resolveTargetHost checks it. */
export const hostOf = (url: URL): string => bareHost(url);

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` that answers with the address already checked, whatever DNS says now (no rebinding). */
export function pinnedLookup(address: string, family: 4 | 6) {
  return (_hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (options.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * A `lookup` for an http(s) Agent that checks every name it resolves with resolveTargetHost and
 * connects to the checked address: for clients (the AWS SDK) whose requests this code does not
 * make itself. Node skips `lookup` for IP literals: check a literal host with resolveTargetHost
 * before using the Agent.
 */
export function guardedLookup(policy: TargetPolicy, options: ResolveOptions & { subject: TargetSubject }) {
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    resolveTargetHost(hostname, policy, options).then(
      ({ address, family }) => {
        pinnedLookup(address, family)(hostname, lookupOptions, callback);
      },
      (err: unknown) => {
        callback(
          Object.assign(err instanceof Error ? err : new Error(String(err)), { code: 'EREFUSEDTARGET' }),
          '',
        );
      },
    );
  };
}

/**
 * A webhook's URL: scheme (https; http only when allowPrivate), then its host with
 * resolveTargetHost. Returns the URL and the address to connect to.
 */
export async function resolveWebhookTarget(
  url: string,
  policy: TargetPolicy,
  options: ResolveOptions = {},
): Promise<{ url: URL; address: string; family: 4 | 6 }> {
  const target = parseTarget(url, policy);
  const resolved = await resolveTargetHost(bareHost(target), policy, { ...options, subject: WEBHOOK_TARGET });
  return { url: target, ...resolved };
}
