import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { PrivateHostAllowance } from '../../lib/config.js';

const ADDRESS_CLASSES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  uniqueLocal: 'unique-local (private IPv6)',
  ipv4Compatible: 'IPv4-compatible IPv6 (deprecated)',
};

/**
 * Cloud instance-metadata endpoints (AWS IMDS and ECS/EKS task credentials, their IPv6 form,
 * Alibaba, Oracle's legacy address). They hand out credentials, so a network entry that merely
 * covers one does not open it: the operator must name the address itself.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.170.23', 'fd00:ec2::254', 'fd00:ec2::23', '100.100.100.200', '192.0.0.192']);

/** Names of metadata services, refused before any DNS lookup unless the operator names them. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

export const REFUSAL_HINT =
  'tools reach private, loopback, link-local, metadata and other non-public addresses only when the server operator allows them in TOOL_ALLOW_PRIVATE_HOSTS';

/** The class of a non-public address in words, or null for a public unicast address. */
function addressClass(ip: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const range: string = ip.range();
  if (range === 'unicast') {
    // ::a.b.c.d (IPv4-compatible, ::/96) counts as unicast for ipaddr.js but embeds an IPv4 address.
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
      return ADDRESS_CLASSES.ipv4Compatible as string;
    }
    return null;
  }
  // Everything that is not global unicast is refused: reserved, NAT64, 6to4, Teredo and the like too.
  return ADDRESS_CLASSES[range] ?? `reserved (${range})`;
}

/** Lower case, no IPv6 brackets, no trailing dot: the form host names are compared in. */
export const normalizeHost = (host: string): string =>
  host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

/**
 * Decides which addresses a tool may connect to: public unicast ones always; non-public ones
 * (private, loopback, link-local, CGNAT, unique-local, multicast, reserved, IPv4-mapped forms of
 * these) only when the operator's allowance names the host or covers the address; metadata
 * addresses only when the operator names that very address (or the metadata host name).
 * Nothing a tenant configures can widen it.
 */
export class AddressGuard {
  private readonly names: Set<string>;
  private readonly suffixes: string[];
  private readonly networks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /** Addresses the operator listed one by one (a /32 or /128 network). */
  private readonly exact: Set<string>;

  constructor(allowance: PrivateHostAllowance = { names: [], suffixes: [], networks: [] }) {
    this.names = new Set(allowance.names);
    this.suffixes = allowance.suffixes;
    this.networks = allowance.networks.map((network) => ipaddr.parseCIDR(network));
    this.exact = new Set(
      this.networks.filter(([address, bits]) => bits === (address.kind() === 'ipv4' ? 32 : 128)).map(([address]) => address.toString()),
    );
  }

  private nameAllowed(host: string): boolean {
    if (net.isIP(host) !== 0) return false;
    return this.names.has(host) || this.suffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Why a host name may not be looked up at all (a metadata service's name), or null. */
  nameRefusal(hostname: string): string | null {
    const host = normalizeHost(hostname);
    if (METADATA_NAMES.has(host) && !this.names.has(host)) {
      return `host ${host} is a cloud metadata service; ${REFUSAL_HINT}, naming it exactly`;
    }
    return null;
  }

  /**
   * Why a URL's host may not be connected to, decided before any lookup: a literal address the
   * rules refuse, or a metadata service's name; null otherwise (names are checked on their DNS
   * answer when connecting, `guardedLookup`).
   */
  hostRefusal(hostname: string): string | null {
    const host = normalizeHost(hostname);
    return net.isIP(host) !== 0 ? this.refusal(host, host) : this.nameRefusal(host);
  }

  /** Why `host` may not be connected to at `address` (the resolved or literal address), or null. */
  refusal(hostname: string, address: string): string | null {
    const host = normalizeHost(hostname);
    const subject = host === address ? `address ${address}` : `address ${address} of ${host}`;
    if (!ipaddr.isValid(address)) return `${subject} is not an IP address`;
    // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it stands for.
    const ip = ipaddr.process(address);
    const canonical = ip.toString();
    const found = addressClass(ip);
    if (METADATA_ADDRESSES.has(canonical)) {
      if (this.exact.has(canonical) || (METADATA_NAMES.has(host) && this.names.has(host))) return null;
      return `${subject} is ${found ?? 'reserved'}, a cloud metadata address; ${REFUSAL_HINT}, naming the address exactly`;
    }
    if (found === null) return null;
    if (this.nameAllowed(host)) return null;
    if (this.networks.some(([network, bits]) => network.kind() === ip.kind() && ip.match(network, bits))) return null;
    return `${subject} is ${found}; ${REFUSAL_HINT}`;
  }
}

/** A resolved address of a class Cairn does not connect to. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_CAIRN_ADDRESS_REFUSED';

  constructor(reason: string) {
    super(reason);
    this.name = 'AddressRefusedError';
  }
}

/**
 * The connection's own DNS lookup: the address checked is the address the socket connects to, so
 * a host cannot answer one lookup with a public address and the next with a private one. A host
 * with any refused address is refused as a whole.
 */
export function guardedLookup(guard: AddressGuard): LookupFunction {
  return (hostname, options, callback) => {
    const named = guard.nameRefusal(hostname);
    if (named) return callback(new AddressRefusedError(named), '');
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const entry of addresses) {
        const refused = guard.refusal(hostname, entry.address);
        if (refused) return callback(new AddressRefusedError(refused), '');
      }
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Why `hostname` may not be connected to at the addresses it resolves to now (null: it may), as
 * `guardedLookup` decides when connecting; a failed lookup rejects.
 */
export function resolvedRefusal(lookup: LookupFunction, hostname: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: true }, (err) => {
      if (err instanceof AddressRefusedError) resolve(err.message);
      else if (err) reject(err);
      else resolve(null);
    });
  });
}
