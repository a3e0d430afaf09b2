import { expect } from 'chai';
import { validateFlow } from '../../core/agents/agents.js';
import { checkMcpTarget } from '../../core/agents/mcp-servers.js';
import { canonicalMcpServer } from '../../core/project/spec.js';

const stored = { url: 'https://mcp.example.com/mcp', allowed_hosts: '["mcp.example.com"]', hosts_explicit: false };

describe('MCP servers', () => {
  describe('checkMcpTarget', () => {
    it('defaults the hosts to the url’s, and resets them when the url moves', () => {
      expect(checkMcpTarget({ url: 'https://mcp.example.com/mcp' }, { url: '', allowed_hosts: '[]', hosts_explicit: false })).to.deep.equal(stored);
      expect(checkMcpTarget({ url: 'https://other.example.org/mcp' }, { ...stored, allowed_hosts: '["mcp.example.com","*.example.org"]', hosts_explicit: true })).to.deep.equal({
        url: 'https://other.example.org/mcp',
        allowed_hosts: '["other.example.org"]',
        hosts_explicit: false,
      });
    });

    it('keeps explicit hosts while the url stays, and checks that they cover it', () => {
      const explicit = checkMcpTarget({ allowed_hosts: ['*.example.com', ' MCP.example.com'] }, stored);
      expect(explicit).to.deep.equal({ url: stored.url, allowed_hosts: '["*.example.com","mcp.example.com"]', hosts_explicit: true });
      expect(checkMcpTarget({}, explicit)).to.deep.equal(explicit);
      expect(() => checkMcpTarget({ allowed_hosts: ['example.com'] }, stored)).to.throw(/allowed_hosts must include the host of url \(mcp\.example\.com\)/);
    });

    it('refuses what is not an http(s) URL without credentials, naming every problem', () => {
      for (const url of ['mcp.example.com', 'ws://mcp.example.com/mcp', 'https://u:p@mcp.example.com/mcp']) {
        expect(() => checkMcpTarget({ url }, stored), url).to.throw(/\/url/);
      }
    });
  });

  it('gives a spec’s server the service’s defaults, hosts only when explicit', () => {
    expect(canonicalMcpServer({ name: 'shop', url: 'https://mcp.example.com/mcp', tools: ['a', 'a', 'b'] })).to.deep.equal({
      name: 'shop',
      url: 'https://mcp.example.com/mcp',
      auth_header: 'Authorization',
      secret_ref: null,
      tools: ['a', 'b'],
      rate_per_min: 60,
    });
    expect(canonicalMcpServer({ name: 'shop', url: 'https://mcp.example.com/mcp', allowed_hosts: ['mcp.example.com'] }).allowed_hosts).to.deep.equal(['mcp.example.com']);
  });

  it('lets a flow tool node name <server>__<tool> of one of the agent’s servers only', () => {
    const flow = (tool: string) => ({ start: 'a', nodes: { a: { type: 'tool' as const, tool } } });
    const known = { tools: new Set(['lookup']), mcpServers: new Set(['shop']) };
    expect(() => validateFlow(flow('shop__get_order'), known)).to.not.throw();
    expect(() => validateFlow(flow('lookup'), known)).to.not.throw();
    for (const tool of ['shop__', 'shops__get_order', 'other__get_order']) expect(() => validateFlow(flow(tool), known), tool).to.throw(/names no tool of this agent/);
  });
});
