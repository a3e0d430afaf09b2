import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';

interface Change {
  kind: string;
  name: string;
  action: string;
  detail?: string;
}

interface Spec {
  kind: string;
  version: number;
  agents: Array<Record<string, unknown> & { name: string; tools: Array<Record<string, unknown> & { name: string }>; rules: Array<Record<string, unknown>> }>;
  knowledge: Array<Record<string, unknown> & { name: string }>;
  schemas: Array<{ name: string; versions: Array<Record<string, unknown>> }>;
  indexes: Array<Record<string, unknown> & { name: string }>;
  settings: { memory_embed_model: string | null };
}

/** A 32-byte SECRETS_KEY (the production profile has none unless one is set). */
const secretsKey = (): string => randomBytes(32).toString('base64');

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysOf(v, into));
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      into.add(key);
      keysOf(v, into);
    }
  }
  return into;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const notUnchanged = (changes: Change[]) => changes.filter((c) => c.action !== 'unchanged');

describe(`project export and apply (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  /** The source project, configured through the API in `before`; tests only read it. */
  let source: Client;
  let exported: Spec;
  const secretValue = `sk-live-${randomBytes(16).toString('hex')}`;

  type Client = ReturnType<typeof client>;
  const client = (key: string) => {
    const auth = token(key);
    return {
      get: (path: string) => t.http.get(path).set('Authorization', auth),
      post: (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object),
      put: (path: string, body: unknown) => t.http.put(path).set('Authorization', auth).send(body as object),
      patch: (path: string, body: unknown) => t.http.patch(path).set('Authorization', auth).send(body as object),
    };
  };

  /** A new project; with a `shop-token` secret unless told otherwise. */
  const project = async (withSecret = true): Promise<Client> => {
    const api = client((await newProject(t)).key);
    if (withSecret) expect((await api.put('/v1/secrets/shop-token', { value: `other-${randomBytes(8).toString('hex')}` })).status).to.equal(201);
    return api;
  };

  const created = async (res: { status: number; body: unknown }, status = 201) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body as Record<string, unknown>;
  };

  const exportOf = async (api: Client): Promise<Spec> => {
    const res = await api.get('/v1/project/export');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as Spec;
  };

  const apply = async (api: Client, spec: unknown, dryRun?: boolean): Promise<Change[]> => {
    const res = await api.post('/v1/project/apply', { spec, ...(dryRun === undefined ? {} : { dry_run: dryRun }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.dry_run).to.equal(dryRun === true);
    return res.body.changes as Change[];
  };

  before(async () => {
    t = await startRuntime({ env: { SECRETS_KEY: secretsKey() } });
    source = client((await newProject(t)).key);
    await created(await source.put('/v1/secrets/shop-token', { value: secretValue }));
    await created(await source.post('/v1/knowledge', { name: 'handbook', instructions: 'Answer from the handbook.', chunk_size: 500, chunk_overlap: 50 }));
    await created(await source.post('/v1/knowledge', { name: 'faq' }));
    const lead = {
      type: 'object',
      properties: { name: { type: 'string' }, email: { type: 'string' }, stage: { type: 'string', enum: ['new', 'won'] } },
      required: ['name'],
    };
    await created(await source.post('/v1/schemas', { name: 'lead', json_schema: lead, description: 'A sales lead' }));
    await created(
      await source.post('/v1/schemas/lead', {
        json_schema: { ...lead, properties: { ...lead.properties, tags: { type: 'array', items: { type: 'string' } } } },
        embed_template: '{{name}} ({{stage}}): {{tags}}',
        retention: { max_age_days: 30 },
      }),
    );
    await created(await source.post('/v1/schemas', { name: 'note', json_schema: { type: 'object', properties: { text: { type: 'string' } } } }));
    await created(await source.post('/v1/indexes', { name: 'raw-vectors', dimension: 8, metric: 'dotproduct', tags: { team: 'search' }, deletion_protection: 'enabled' }));
    await created(await source.post('/v1/indexes', { name: 'notes', embed: { model: 'local', field_map: { text: 'body' } } }));
    await created(
      await source.post('/v1/agents', {
        name: 'support',
        instructions: 'Be brief.',
        fallback_message: 'Ask a human.',
        ui_actions: ['SHOW_RATING'],
        guardrails: { input: { checks: ['pii', 'jailbreak'], riskThreshold: 0.7 } },
        tool_policy: { maxCallsPerTurn: 2, allow: ['lookup_order'] },
        stream_mode: 'sse',
        knowledge: ['handbook', 'faq'],
        flow: {
          start: 'check',
          nodes: {
            check: { type: 'condition', if: 'message.lowerAscii().contains("order")', then: 'lookup', else: 'answer' },
            lookup: { type: 'tool', tool: 'lookup_order', next: 'answer' },
            answer: { type: 'llm', next: 'done' },
            done: { type: 'respond' },
          },
        },
      }),
    );
    await created(
      await source.post('/v1/agents/support/tools', {
        name: 'lookup_order',
        description: 'Look up an order by id',
        http: { url: 'https://shop.example.com/orders/{order_id}', method: 'get' },
        parameters: { type: 'object', properties: { order_id: { type: 'integer' } }, required: ['order_id'] },
        auth_header: 'X-Api-Key',
        secret_ref: 'shop-token',
        rate_per_min: 30,
      }),
    );
    await created(
      await source.post('/v1/agents/support/tools', {
        name: 'create_ticket',
        http: { url: 'https://api.example.com/tickets', method: 'POST' },
        allowed_hosts: ['API.example.com', '*.example.org'],
      }),
    );
    for (const rule of [
      { rule_type: 'ui_action', condition: 'message.contains("rate")', action: 'SHOW_RATING' },
      { rule_type: 'escalation', condition: 'message.lowerAscii().contains("human")', action: 'A person will take over.', priority: 10 },
      { rule_type: 'block', condition: 'message.contains("password")', action: 'I cannot help with that.', priority: 5 },
    ]) {
      await created(await source.post('/v1/agents/support/rules', rule));
    }
    await created(await source.post('/v1/agents', { name: 'sales', knowledge: ['faq'] }));
    await created(await source.post('/v1/agents/sales/rules', { rule_type: 'response', condition: 'message == "price"', action: 'Ten euros.' }));
    exported = await exportOf(source);
  });
  after(() => t.close());

  it('exports the configuration without ids, timestamps or secret values, in a fixed order', async () => {
    expect(exported).to.include({ kind: 'cairn.project', version: 1 });
    expect(Object.keys(exported)).to.have.members(['kind', 'version', 'agents', 'knowledge', 'schemas', 'indexes', 'settings']);
    expect(exported.settings).to.deep.equal({ memory_embed_model: null });
    const keys = keysOf(exported);
    for (const key of ['id', 'created_at', 'updated_at', 'document_count', 'value', 'sealed']) expect(keys.has(key), key).to.equal(false);
    expect(JSON.stringify(exported)).not.to.include(secretValue);

    expect(exported.knowledge.map((k) => k.name)).to.deep.equal(['faq', 'handbook']);
    expect(exported.knowledge[1]).to.deep.equal({
      name: 'handbook',
      instructions: 'Answer from the handbook.',
      model: 'local',
      embed_model: 'local/all-MiniLM-L6-v2',
      chunk_size: 500,
      chunk_overlap: 50,
    });
    expect(exported.schemas.map((s) => s.name)).to.deep.equal(['lead', 'note']);
    const [v1, v2] = exported.schemas[0]?.versions ?? [];
    expect(exported.schemas[0]?.versions).to.have.length(2);
    expect(v1).to.include({ embed_template: null, retention: null, description: 'A sales lead' });
    expect(v2).to.include({ embed_template: '{{name}} ({{stage}}): {{tags}}', description: 'A sales lead' });
    expect(v2?.retention).to.deep.equal({ max_age_days: 30 });
    expect(exported.indexes).to.deep.equal([
      { name: 'notes', embed: { model: 'local/all-MiniLM-L6-v2', field_map: { text: 'body' } }, metric: 'cosine', deletion_protection: 'disabled', tags: {} },
      { name: 'raw-vectors', dimension: 8, metric: 'dotproduct', deletion_protection: 'enabled', tags: { team: 'search' } },
    ]);

    expect(exported.agents.map((a) => a.name)).to.deep.equal(['sales', 'support']);
    const support = exported.agents[1] as Spec['agents'][number];
    expect(support).to.include({ instructions: 'Be brief.', fallback_message: 'Ask a human.', stream_mode: 'sse', model: 'local' });
    expect(support.knowledge).to.deep.equal(['handbook', 'faq']);
    expect((support.flow as { start: string }).start).to.equal('check');
    expect(support.tools.map((tool) => tool.name)).to.deep.equal(['create_ticket', 'lookup_order']);
    expect(support.tools[0]).to.deep.include({ http: { url: 'https://api.example.com/tickets', method: 'POST' }, allowed_hosts: ['api.example.com', '*.example.org'], secret_ref: null });
    expect(support.tools[1]).to.deep.include({ http: { url: 'https://shop.example.com/orders/{order_id}', method: 'GET' }, secret_ref: 'shop-token', auth_header: 'X-Api-Key', rate_per_min: 30 });
    // hosts defaulted from the URL are not exported, so the target derives them from its own URL
    expect(support.tools[1]).not.to.have.property('allowed_hosts');
    expect(support.rules.map((r) => r.priority)).to.deep.equal([10, 5, 0]);
    expect(support.rules[0]).to.deep.equal({ rule_type: 'escalation', condition: 'message.lowerAscii().contains("human")', action: 'A person will take over.', priority: 10 });

    // the same project exports the same document every time
    expect(JSON.stringify(await exportOf(source))).to.equal(JSON.stringify(exported));
  });

  it('applies into a fresh project: a dry run lists the creates and changes nothing; the real apply reproduces the export', async () => {
    const target = await project();
    const empty = await exportOf(target);
    expect(empty).to.deep.equal({ kind: 'cairn.project', version: 1, agents: [], knowledge: [], schemas: [], indexes: [], settings: { memory_embed_model: null } });

    const planned = await apply(target, exported, true);
    // both projects use the server's memory embedding model: the one setting is unchanged
    expect(planned.filter((c) => c.kind === 'setting')).to.deep.equal([{ kind: 'setting', name: 'memory_embed_model', action: 'unchanged' }]);
    expect(planned.filter((c) => c.kind !== 'setting').map((c) => c.action)).to.satisfy((actions: string[]) => actions.every((a) => a === 'create'));
    const count = (kind: string) => planned.filter((c) => c.kind === kind).length;
    expect({ knowledge: count('knowledge'), schema: count('schema'), index: count('index'), agent: count('agent'), tool: count('tool'), rule: count('rule') }).to.deep.equal({
      knowledge: 2,
      schema: 2,
      index: 2,
      agent: 2,
      tool: 2,
      rule: 4,
    });
    // knowledge first (agents refer to it), then schemas, indexes and agents
    const stages = planned.map((c) => (c.kind === 'tool' || c.kind === 'rule' ? 'agent' : c.kind));
    expect([...new Set(stages)]).to.deep.equal(['knowledge', 'schema', 'index', 'agent', 'setting']);
    expect(planned.filter((c) => c.kind === 'agent' || c.name.startsWith('support/')).map((c) => `${c.kind} ${c.name}`)).to.deep.equal([
      'agent sales',
      'agent support',
      'tool support/create_ticket',
      'tool support/lookup_order',
      'rule support/message.lowerAscii().contains("human")',
      'rule support/message.contains("password")',
      'rule support/message.contains("rate")',
    ]);
    expect(planned).to.deep.include({ kind: 'tool', name: 'support/lookup_order', action: 'create' });
    expect(await exportOf(target)).to.deep.equal(empty);

    const applied = await apply(target, exported, false);
    expect(applied).to.deep.equal(planned);
    expect(await exportOf(target)).to.deep.equal(exported);
    // the tool uses the target's own secret of that name
    const tool = await target.get('/v1/agents/support/tools/lookup_order');
    expect(tool.body).to.include({ secret_ref: 'shop-token' });
    expect(tool.body.allowed_hosts).to.deep.equal(['shop.example.com']);
  });

  it('applying the same spec again reports everything unchanged', async () => {
    const target = await project();
    await apply(target, exported);
    const again = await apply(target, exported);
    expect(notUnchanged(again)).to.deep.equal([]);
    expect(again).to.have.length(2 + 2 + 2 + 2 + 2 + 4 + 1);
    expect(await exportOf(target)).to.deep.equal(exported);
  });

  it('an edited spec changes exactly what was edited: a changed rule, a removed tool, a new agent', async () => {
    const target = await project();
    await apply(target, exported);
    const edited = clone(exported);
    const support = edited.agents.find((a) => a.name === 'support') as Spec['agents'][number];
    const escalation = support.rules.find((r) => r.rule_type === 'escalation') as Record<string, unknown>;
    escalation.action = 'Connecting you to a person.';
    support.tools = support.tools.filter((tool) => tool.name !== 'create_ticket');
    edited.agents.push({ name: 'triage', instructions: 'Route questions.', tools: [], rules: [] });

    const expected = [
      { kind: 'tool', name: 'support/create_ticket', action: 'delete' },
      { kind: 'rule', name: 'support/message.lowerAscii().contains("human")', action: 'update', detail: 'changes action' },
      { kind: 'agent', name: 'triage', action: 'create' },
    ];
    const planned = await apply(target, edited, true);
    expect(notUnchanged(planned)).to.deep.equal(expected);
    expect(await exportOf(target)).to.deep.equal(exported);

    expect(notUnchanged(await apply(target, edited))).to.deep.equal(expected);
    const after = await exportOf(target);
    expect(after.agents.map((a) => a.name)).to.deep.equal(['sales', 'support', 'triage']);
    const supportAfter = after.agents[1] as Spec['agents'][number];
    expect(supportAfter.tools.map((tool) => tool.name)).to.deep.equal(['lookup_order']);
    expect(supportAfter.rules[0]).to.include({ action: 'Connecting you to a person.', priority: 10 });
    // the rule was changed in place, not replaced
    const rules = (await target.get('/v1/agents/support/rules')).body.rules as Array<{ id: string; action: string }>;
    expect(rules).to.have.length(3);
    expect(notUnchanged(await apply(target, edited))).to.deep.equal([]);
  });

  it('reports what it cannot reconcile as conflicts and leaves it alone', async () => {
    const target = await project();
    await created(await target.post('/v1/knowledge', { name: 'handbook', chunk_size: 800 }));
    await created(await target.post('/v1/schemas', { name: 'lead', json_schema: { type: 'object', properties: { name: { type: 'string' } } } }));
    await created(await target.post('/v1/indexes', { name: 'raw-vectors', dimension: 16 }));
    const changes = await apply(target, exported);
    const conflicts = changes.filter((c) => c.action === 'conflict');
    expect(conflicts.map((c) => `${c.kind} ${c.name}`)).to.deep.equal(['knowledge handbook', 'schema lead', 'index raw-vectors']);
    expect(conflicts[0]?.detail).to.match(/chunk_size/);
    expect(conflicts[1]?.detail).to.match(/Version 1 differs/);
    expect(conflicts[2]?.detail).to.match(/dimension/);
    expect((await target.get('/v1/knowledge/handbook')).body.chunk_size).to.equal(800);
    expect((await target.get('/v1/schemas/lead')).body.version).to.equal(1);
    // the rest was applied
    expect((await target.get('/v1/agents/support')).status).to.equal(200);
  });

  it('appends the versions a schema is missing', async () => {
    const target = await project();
    const lead = exported.schemas.find((s) => s.name === 'lead') as Spec['schemas'][number];
    const first = lead.versions[0] as Record<string, unknown>;
    await created(await target.post('/v1/schemas', { name: 'lead', ...first }));
    const changes = await apply(target, { kind: 'cairn.project', version: 1, schemas: [lead] });
    expect(changes).to.deep.equal([{ kind: 'schema', name: 'lead', action: 'update', detail: 'publishes version 2' }]);
    expect((await exportOf(target)).schemas).to.deep.equal([lead]);
  });

  it('refuses unknown fields anywhere in the spec with 400 {detail, code}, changing nothing', async () => {
    const target = await project();
    const withAgentField = clone(exported);
    (withAgentField.agents[0] as Record<string, unknown>).colour = 'blue';
    const withToolField = clone(exported);
    (withToolField.agents[1]?.tools[0] as Record<string, unknown>).secret_value = secretValue;
    for (const [body, path] of [
      [{ spec: { ...exported, extra: true } }, '/spec/extra'],
      [{ spec: withAgentField }, '/spec/agents/0/colour'],
      [{ spec: withToolField }, '/spec/agents/1/tools/0/secret_value'],
      [{ spec: exported, dry_run: true, force: true }, '/force'],
      [{ spec: { ...exported, kind: 'something.else' } }, '/spec/kind'],
    ] as const) {
      const res = await target.post('/v1/project/apply', body);
      expect(res.status, path).to.equal(400);
      expect(res.body).to.include.keys('detail', 'code');
      expect(res.body.errors.map((e: { path: string }) => e.path), path).to.include(path);
    }
    expect(await exportOf(target)).to.deep.include({ agents: [], knowledge: [], schemas: [], indexes: [] });
  });

  it('refuses a spec that cannot be applied — a missing secret, an unknown knowledge base, a bad condition — listing every problem, changing nothing', async () => {
    const target = await project(false);
    const spec = clone(exported);
    const sales = spec.agents[0] as Spec['agents'][number];
    sales.knowledge = ['faq', 'nowhere'];
    sales.rules = [{ rule_type: 'block', condition: 'message +', action: 'no' }];
    for (const dryRun of [true, false]) {
      const res = await target.post('/v1/project/apply', { spec, dry_run: dryRun });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('invalid_spec');
      expect(res.body.detail).to.match(/Nothing was changed/);
      const paths = (res.body.errors as Array<{ path: string; message: string }>).map((e) => e.path);
      expect(paths).to.include.members(['/spec/agents/1/tools/1/secret_ref', '/spec/agents/0/knowledge/1', '/spec/agents/0/rules/0/condition']);
      expect(JSON.stringify(res.body)).to.match(/PUT \/v1\/secrets\/shop-token/);
    }
    expect(await exportOf(target)).to.deep.include({ agents: [], knowledge: [], schemas: [], indexes: [] });
  });

  it("never shows one project's resources in another project's export", async () => {
    const other = await project();
    const name = unique('private');
    await created(await other.post('/v1/agents', { name }));
    await created(await other.post('/v1/knowledge', { name }));
    await created(await other.post('/v1/indexes', { name: `idx-${randomBytes(4).toString('hex')}`, dimension: 4 }));
    const mine = await exportOf(source);
    expect(JSON.stringify(mine)).not.to.include(name);
    expect(mine).to.deep.equal(exported);
    const theirs = await exportOf(other);
    expect(theirs.agents.map((a) => a.name)).to.deep.equal([name]);
    expect(theirs.knowledge.map((k) => k.name)).to.deep.equal([name]);
    expect(theirs.schemas).to.deep.equal([]);
    expect(theirs.indexes).to.have.length(1);
  });

  it('needs a project API key', async () => {
    expect((await t.http.get('/v1/project/export')).status).to.equal(401);
    expect((await t.http.post('/v1/project/apply').send({ spec: exported })).status).to.equal(401);
  });
});
