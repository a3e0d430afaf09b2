import { expect } from 'chai';
import { canonicalAgentSettings, canonicalSchemaVersion, canonicalTool, matchRules, ruleOrder, type CanonicalRule, type ModelNames } from '../../core/project/spec.js';

const rule = (condition: string, action = 'no', priority = 0, rule_type: CanonicalRule['rule_type'] = 'block'): CanonicalRule => ({ rule_type, condition, action, priority });
const models: ModelNames = { chat: (n) => n, knowledge: (n) => n, embed: (n) => n };

describe('project spec', () => {
  describe('matchRules', () => {
    it('keeps equal rules, updates a rule whose condition stayed, creates and deletes the rest', () => {
      const existing = [
        { id: 'a', rule: rule('message == "a"') },
        { id: 'b', rule: rule('message == "b"', 'old') },
        { id: 'c', rule: rule('message == "c"') },
      ];
      const result = matchRules(existing, [rule('message == "a"'), rule('message == "b"', 'new'), rule('message == "d"')]);
      expect(result.unchanged.map((r) => r.id)).to.deep.equal(['a']);
      expect(result.update).to.deep.equal([{ id: 'b', from: rule('message == "b"', 'old'), to: rule('message == "b"', 'new') }]);
      expect(result.create).to.deep.equal([rule('message == "d"')]);
      expect(result.delete.map((r) => r.id)).to.deep.equal(['c']);
    });

    it('counts repeated rules as often as they appear', () => {
      const same = rule('true');
      const result = matchRules(
        [
          { id: 1, rule: same },
          { id: 2, rule: same },
        ],
        [same],
      );
      expect(result.unchanged.map((r) => r.id)).to.deep.equal([1]);
      expect(result.delete.map((r) => r.id)).to.deep.equal([2]);
    });

    it('pairs a changed rule with one of the same type before one of another type', () => {
      const existing = [
        { id: 'x', rule: rule('turn > 3', 'Stop.', 0, 'block') },
        { id: 'y', rule: rule('turn > 3', 'Hand over.', 0, 'escalation') },
      ];
      const result = matchRules(existing, [rule('turn > 3', 'A person will help.', 1, 'escalation'), rule('turn > 3', 'SHOW_RATING', 0, 'ui_action')]);
      expect(result.update.map((u) => [u.id, u.to.rule_type])).to.deep.equal([
        ['y', 'escalation'],
        ['x', 'ui_action'],
      ]);
      expect(result.create).to.deep.equal([]);
      expect(result.delete).to.deep.equal([]);
    });
  });

  it('orders rules as they run: priority first, then condition and action', () => {
    const rules = [rule('b', 'x', 0), rule('a', 'y', 0), rule('z', 'x', 5), rule('a', 'x', 0)];
    expect(rules.sort(ruleOrder).map((r) => `${r.priority}:${r.condition}:${r.action}`)).to.deep.equal(['5:z:x', '0:a:x', '0:a:y', '0:b:x']);
  });

  describe('canonicalTool', () => {
    it('fills defaults and leaves out hosts that come from the URL', () => {
      expect(canonicalTool({ name: 't', http: { url: 'https://api.example.com/x', method: 'post' } })).to.deep.equal({
        name: 't',
        description: '',
        http: { url: 'https://api.example.com/x', method: 'POST' },
        parameters: { type: 'object', properties: {} },
        auth_header: 'Authorization',
        secret_ref: null,
        rate_per_min: 60,
      });
    });

    it('keeps explicit hosts, as the service stores them', () => {
      const tool = canonicalTool({ name: 't', http: { url: 'https://api.example.com/x' }, allowed_hosts: [' API.example.com', 'api.example.com', '*.example.org'] });
      expect(tool.allowed_hosts).to.deep.equal(['api.example.com', '*.example.org']);
      expect(tool.http.method).to.equal('GET');
    });

    it('throws 400 for a target the service would refuse', () => {
      expect(() => canonicalTool({ name: 't', http: { url: 'https://api.example.com/{id}' } })).to.throw(/id/);
      expect(() => canonicalTool({ name: 't', http: { url: 'https://a.example.com/' }, allowed_hosts: ['b.example.com'] })).to.throw(/allowed_hosts/);
    });
  });

  it('treats a template equal to the default as the default', () => {
    const json_schema = { type: 'object', properties: { name: { type: 'string' }, city: { type: 'string' } } };
    expect(canonicalSchemaVersion({ json_schema, embed_template: 'name: {{name}}\ncity: {{city}}' }).embed_template).to.equal(null);
    expect(canonicalSchemaVersion({ json_schema, embed_template: '{{name}} in {{city}}' }).embed_template).to.equal('{{name}} in {{city}}');
    expect(canonicalSchemaVersion({ json_schema })).to.deep.include({ embed_template: null, retention: null, description: null });
  });

  it('fills an agent’s defaults as create does: a guardrail side that is sent is enabled', () => {
    const settings = canonicalAgentSettings({ name: 'a', guardrails: { input: { checks: ['pii', 'pii'] } }, tool_policy: { maxCallsPerTurn: 1 } }, models);
    expect(settings).to.include({ instructions: '', model: 'local', stream_mode: 'buffered', flow: null });
    expect(settings.guardrails.input).to.deep.equal({ enabled: true, failOpen: false, checks: ['pii'], riskThreshold: 0.5 });
    expect(settings.guardrails.output.enabled).to.equal(false);
    expect(settings.tool_policy).to.deep.equal({ version: '1', maxCallsPerTurn: 1, allow: ['*'] });
  });
});
