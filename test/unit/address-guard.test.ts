import { expect } from 'chai';
import { AddressGuard } from '../../core/outbound/address-guard.js';
import { loadConfig } from '../../lib/config.js';

/** A guard with the operator's TOOL_ALLOW_PRIVATE_HOSTS set to `raw`. */
const guard = (raw = ''): AddressGuard => new AddressGuard(loadConfig({ TOOL_ALLOW_PRIVATE_HOSTS: raw }).toolAllowPrivateHosts);

describe('address guard', () => {
  it('lets public unicast addresses through', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(guard().refusal('api.example.com', address), address).to.equal(null);
    }
  });

  it('refuses every non-public class without the operator’s allowance', () => {
    const cases: Array<[string, RegExp]> = [
      ['127.0.0.1', /loopback/],
      ['127.8.9.10', /loopback/],
      ['::1', /loopback/],
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:7f00:1', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['192.168.1.1', /private/],
      ['169.254.1.1', /link-local/],
      ['fe80::1', /link-local/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['fd12:3456::1', /unique-local/],
      ['0.0.0.0', /unspecified/],
      ['::', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['ff02::1', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['240.0.0.1', /reserved/],
      ['198.18.0.1', /reserved/],
      ['64:ff9b::7f00:1', /reserved/],
      ['2002:7f00:1::1', /reserved/],
      ['::7f00:1', /IPv4-compatible/],
    ];
    for (const [address, pattern] of cases) {
      const refused = guard().refusal('internal.example.com', address);
      expect(refused, address).to.match(pattern).and.include('TOOL_ALLOW_PRIVATE_HOSTS');
    }
  });

  it('lets through what the operator allows by network, address or name, and nothing more', () => {
    const g = guard('10.0.0.0/8,127.0.0.1,billing.internal,*.svc.local,fd12::/16');
    expect(g.refusal('anything.example.com', '10.9.8.7')).to.equal(null);
    expect(g.refusal('127.0.0.1', '127.0.0.1')).to.equal(null);
    expect(g.refusal('127.0.0.1', '::ffff:127.0.0.1')).to.equal(null);
    expect(g.refusal('fd12:1::1', 'fd12:1::1')).to.equal(null);
    expect(g.refusal('billing.internal', '192.168.5.5')).to.equal(null);
    expect(g.refusal('BILLING.internal.', '192.168.5.5')).to.equal(null);
    expect(g.refusal('api.svc.local', '172.20.0.9')).to.equal(null);
    expect(g.refusal('127.0.0.2', '127.0.0.2')).to.match(/loopback/);
    expect(g.refusal('other.internal', '192.168.5.5')).to.match(/private/);
    expect(g.refusal('svc.local', '172.20.0.9')).to.match(/private/);
    expect(g.refusal('::1', '::1')).to.match(/loopback/);
  });

  it('keeps metadata addresses refused unless the operator names them exactly', () => {
    const wide = guard('169.254.0.0/16,100.64.0.0/10,fd00::/8,0.0.0.0/0,cloud.internal');
    for (const address of ['169.254.169.254', '::ffff:169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192']) {
      expect(wide.refusal('cloud.internal', address), address).to.match(/cloud metadata address/);
    }
    expect(wide.refusal('x', '169.254.1.1')).to.equal(null);
    expect(guard('169.254.169.254').refusal('169.254.169.254', '169.254.169.254')).to.equal(null);
    expect(guard('fd00:ec2::254').refusal('fd00:ec2::254', 'fd00:ec2::254')).to.equal(null);
  });

  it('refuses metadata service names before any lookup unless named', () => {
    expect(guard().nameRefusal('metadata.google.internal')).to.match(/cloud metadata service/);
    expect(guard().nameRefusal('Metadata.Google.Internal.')).to.match(/cloud metadata service/);
    expect(guard('*.internal').nameRefusal('metadata.google.internal')).to.match(/cloud metadata service/);
    expect(guard().nameRefusal('api.example.com')).to.equal(null);
    const named = guard('metadata.google.internal');
    expect(named.nameRefusal('metadata.google.internal')).to.equal(null);
    expect(named.refusal('metadata.google.internal', '169.254.169.254')).to.equal(null);
    expect(named.refusal('other.example.com', '169.254.169.254')).to.match(/cloud metadata address/);
  });
});
