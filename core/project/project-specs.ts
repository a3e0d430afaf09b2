import { AppError, badRequest, type FieldError } from '../../lib/errors.js';
import { checkRuleAction, DEFAULT_AGENT_MODEL, validateFlow, type AgentInput, type Agents, type ToolInput } from '../agents/agents.js';
import { compileCondition } from '../agents/conditions.js';
import type { McpServerInput } from '../agents/mcp-servers.js';
import { DEFAULT_EMBED_MODEL, DEFAULT_LANGUAGE_MODEL, modelName, type Embedders, type LanguageModels } from '../../providers/registry.js';
import type { Indexes } from '../indexes.js';
import type { Knowledge } from '../knowledge/knowledge.js';
import { assertDefinition, SCHEMA_LIMITS, type Schemas } from '../schemas.js';
import type { Secrets } from '../secrets.js';
import type { ProjectSettings } from './settings.js';
import {
  AGENT_SETTINGS,
  agentOf,
  byName,
  canonicalAgentSettings,
  canonicalIndex,
  canonicalKnowledge,
  canonicalMcpServer,
  canonicalRule,
  canonicalSchemaVersion,
  canonicalTool,
  changedKeys,
  indexOf,
  knowledgeOf,
  matchRules,
  ruleOf,
  ruleOrder,
  schemaVersionOf,
  SPEC_KIND,
  SPEC_VERSION,
  type CanonicalAgent,
  type CanonicalIndex,
  type CanonicalKnowledge,
  type CanonicalMcpServer,
  type CanonicalRule,
  type CanonicalSchema,
  type CanonicalSchemaVersion,
  type CanonicalSettings,
  type CanonicalTool,
  type ModelNames,
  type ProjectDocument,
  type ProjectSpec,
} from './spec.js';

export type ChangeKind = 'agent' | 'tool' | 'mcp_server' | 'rule' | 'knowledge' | 'schema' | 'index' | 'setting';
export type ChangeAction = 'create' | 'update' | 'delete' | 'unchanged' | 'conflict';

/** One resource an apply creates, changes, deletes, leaves alone, or cannot reconcile. */
export interface Change {
  kind: ChangeKind;
  /** Tools are `agent/tool`, MCP servers `agent/server`; rules `agent/condition`. */
  name: string;
  action: ChangeAction;
  detail?: string;
}

export interface ApplyResult {
  dry_run: boolean;
  changes: Change[];
}

/** A planned change and, unless it is a no-op or a conflict, the work that makes it. */
interface Step {
  change: Change;
  run?: () => Promise<unknown>;
}

/** A project's configuration as it is now, in canonical form (rules with their ids). */
interface Current {
  agents: Map<string, { agent: CanonicalAgent; rules: Array<{ id: string; rule: CanonicalRule }> }>;
  knowledge: Map<string, CanonicalKnowledge>;
  schemas: Map<string, CanonicalSchemaVersion[]>;
  indexes: Map<string, CanonicalIndex>;
  settings: CanonicalSettings;
}

/** What the spec asks for; `settings` null when the spec leaves them out (they stay). */
type Desired = Omit<ProjectDocument, 'kind' | 'version' | 'settings'> & { settings: CanonicalSettings | null };

export interface ProjectSpecServices {
  agents: Agents;
  knowledge: Knowledge;
  schemas: Schemas;
  indexes: Indexes;
  secrets: Secrets;
  languageModels: LanguageModels;
  embedders: Embedders;
  settings: ProjectSettings;
}

const PAGE = 100;
const KNOWLEDGE_KEYS = ['instructions', 'model', 'embed_model', 'chunk_size', 'chunk_overlap'] as const;
const TOOL_KEYS = ['description', 'http', 'parameters', 'auth_header', 'secret_ref', 'rate_per_min', 'allowed_hosts'] as const;
const RULE_KEYS = ['rule_type', 'condition', 'action', 'priority'] as const;
const MCP_SERVER_KEYS = ['url', 'auth_header', 'secret_ref', 'tools', 'rate_per_min', 'allowed_hosts'] as const;

/** Every item of a paged list. */
async function all<T>(page: (limit: number, offset: number) => Promise<T[]>): Promise<T[]> {
  const items: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const batch = await page(PAGE, offset);
    items.push(...batch);
    if (batch.length < PAGE) return items;
  }
}

const ruleName = (agent: string, rule: CanonicalRule): string => `${agent}/${rule.condition}`;
const describeRule = (rule: CanonicalRule): string => `${rule.rule_type} rule, priority ${rule.priority}`;
const toolInput = (tool: CanonicalTool) => ({ ...tool, http: { ...tool.http } });
const serverInput = (server: CanonicalMcpServer) => ({ ...server, tools: server.tools === null ? null : [...server.tools] });

/**
 * Export and apply of a whole project's configuration (agents with their tools and rules,
 * knowledge bases, record schemas with every version, vector indexes) as one document.
 *
 * Apply checks the whole spec against the project first — shape, names, models, flows, rule
 * conditions, tool URLs, record schema definitions, referenced knowledge bases and secrets,
 * limits — and changes nothing when anything is wrong (one 400 listing every problem). Then it
 * reconciles in order: knowledge, schemas, indexes, agents. Each change is atomic on its own;
 * the apply as a whole is not a transaction, so a dependency failing midway leaves the changes
 * made before it, and applying the same spec again completes the rest.
 */
export class ProjectSpecs {
  private readonly models: ModelNames;

  constructor(private readonly services: ProjectSpecServices) {
    this.models = {
      chat: (name) => services.languageModels.validate(name),
      knowledge: (name) => modelName('chat', name),
      embed: (name) => services.embedders.validate(name),
    };
  }

  /** The project's configuration as a spec: no ids, timestamps, data or secret values; lists by name. */
  async export(projectId: string): Promise<ProjectDocument> {
    const current = await this.current(projectId);
    return {
      kind: SPEC_KIND,
      version: SPEC_VERSION,
      agents: [...current.agents.values()].map((a) => a.agent).sort(byName),
      knowledge: [...current.knowledge.values()].sort(byName),
      schemas: [...current.schemas].map(([name, versions]) => ({ name, versions })).sort(byName),
      indexes: [...current.indexes.values()].sort(byName),
      settings: current.settings,
    };
  }

  /**
   * Makes the project match `spec`, or with `dryRun` only says what that would change. Resources
   * the spec does not name are left alone, except an agent's tools and rules, which are made to
   * match the spec's exactly.
   */
  async apply(projectId: string, spec: ProjectSpec, dryRun: boolean): Promise<ApplyResult> {
    const current = await this.current(projectId);
    const desired = await this.desired(projectId, spec, current);
    const steps = [
      ...this.knowledgeSteps(projectId, desired.knowledge, current),
      ...this.schemaSteps(projectId, desired.schemas, current),
      ...this.indexSteps(projectId, desired.indexes, current),
      ...desired.agents.flatMap((agent) => this.agentSteps(projectId, agent, current)),
      ...this.settingSteps(projectId, desired.settings, current),
    ];
    if (!dryRun) {
      for (const step of steps) await step.run?.();
    }
    return { dry_run: dryRun, changes: steps.map((s) => s.change) };
  }

  private async current(projectId: string): Promise<Current> {
    const { agents, knowledge, schemas, indexes } = this.services;
    const [agentViews, bases, schemaViews, indexViews, settings] = await Promise.all([
      all((limit, offset) => agents.list(projectId, limit, offset)),
      all((limit, offset) => knowledge.list(projectId, limit, offset)),
      all((limit, offset) => schemas.list(projectId, limit, offset)),
      all((limit, offset) => indexes.list(projectId, limit, offset)),
      this.services.settings.get(projectId),
    ]);
    const current: Current = {
      agents: new Map(),
      knowledge: new Map(),
      schemas: new Map(),
      indexes: new Map(),
      settings: { memory_embed_model: settings.memory_embed_model },
    };
    for (const { name } of agentViews) {
      // load() has what views leave out: whether a tool's hosts were set explicitly
      const loaded = await agents.load(projectId, name);
      current.agents.set(name, { agent: agentOf(loaded.view, loaded.tools, loaded.mcpServers), rules: loaded.view.rules.map((r) => ({ id: r.id, rule: ruleOf(r) })) });
    }
    for (const base of bases) current.knowledge.set(base.name, knowledgeOf(base));
    for (const { name } of schemaViews) {
      const versions = await all((limit, offset) => schemas.versions(projectId, name, limit, offset));
      current.schemas.set(name, versions.sort((a, b) => a.version - b.version).map(schemaVersionOf));
    }
    for (const index of indexViews) current.indexes.set(index.name, indexOf(index));
    return current;
  }

  /** The spec in canonical form, checked against the project; 400 `invalid_spec` listing every problem. */
  private async desired(projectId: string, spec: ProjectSpec, current: Current): Promise<Desired> {
    const problems: FieldError[] = [];
    const attempt = <T>(at: string, work: () => T): T | undefined => {
      try {
        return work();
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 400) throw err;
        problems.push(...(err.errors?.length ? err.errors.map((e) => ({ path: `${at}${e.path}`, message: e.message })) : [{ path: at, message: err.detail }]));
        return undefined;
      }
    };
    const unique = (items: Array<{ name: string }>, at: string) => {
      const seen = new Set<string>();
      items.forEach(({ name }, i) => {
        if (seen.has(name)) problems.push({ path: `${at}/${i}/name`, message: `repeats "${name}"; names are unique` });
        seen.add(name);
      });
    };
    const desired: Desired = { agents: [], knowledge: [], schemas: [], indexes: [], settings: null };

    if (spec.settings !== undefined) {
      const model = spec.settings.memory_embed_model ?? null;
      const canonical = model === null ? null : attempt('/spec/settings/memory_embed_model', () => this.services.settings.validate(model, ''));
      if (canonical !== undefined) desired.settings = { memory_embed_model: canonical };
    }

    const knowledgeSpecs = spec.knowledge ?? [];
    unique(knowledgeSpecs, '/spec/knowledge');
    knowledgeSpecs.forEach((kb, i) => {
      const at = `/spec/knowledge/${i}`;
      const models = [attempt(`${at}/model`, () => this.models.knowledge(kb.model ?? DEFAULT_LANGUAGE_MODEL)), attempt(`${at}/embed_model`, () => this.models.embed(kb.embed_model ?? DEFAULT_EMBED_MODEL))];
      if (models.includes(undefined)) return;
      const canonical = attempt(at, () => canonicalKnowledge(kb, this.models));
      if (canonical) desired.knowledge.push(canonical);
    });

    const schemaSpecs = spec.schemas ?? [];
    unique(schemaSpecs, '/spec/schemas');
    schemaSpecs.forEach((schema, i) => {
      const versions = schema.versions.map((version, j) => {
        const at = `/spec/schemas/${i}/versions/${j}`;
        return attempt(at, () => assertDefinition(version)) && canonicalSchemaVersion(version);
      });
      if (versions.every((v) => v !== undefined)) desired.schemas.push({ name: schema.name, versions: versions as CanonicalSchemaVersion[] });
    });
    const added = schemaSpecs.filter((s) => !current.schemas.has(s.name)).length;
    if (current.schemas.size + added > SCHEMA_LIMITS.schemasPerProject) {
      problems.push({ path: '/spec/schemas', message: `would give the project ${current.schemas.size + added} record schemas; at most ${SCHEMA_LIMITS.schemasPerProject} are allowed` });
    }

    const indexSpecs = spec.indexes ?? [];
    unique(indexSpecs, '/spec/indexes');
    indexSpecs.forEach((index, i) => {
      const at = `/spec/indexes/${i}`;
      if ((index.dimension !== undefined) === (index.embed !== undefined)) {
        problems.push({ path: at, message: 'give either dimension (with metric) for raw vectors or embed: {model} for server-side embedding, not both or neither' });
        return;
      }
      if (index.embed && attempt(`${at}/embed/model`, () => this.models.embed((index.embed as { model: string }).model)) === undefined) return;
      desired.indexes.push(canonicalIndex(index, this.models));
    });

    const agentSpecs = spec.agents ?? [];
    unique(agentSpecs, '/spec/agents');
    const bases = new Set([...current.knowledge.keys(), ...knowledgeSpecs.map((kb) => kb.name)]);
    const schemaNames = new Set([...current.schemas.keys(), ...schemaSpecs.map((schema) => schema.name)]);
    const secretRefs = new Map<string, string[]>();
    agentSpecs.forEach((agent, i) => {
      const at = `/spec/agents/${i}`;
      const checks = [
        attempt(`${at}/model`, () => this.models.chat(agent.model ?? DEFAULT_AGENT_MODEL)) !== undefined,
        attempt(at, () => {
          if (agent.flow) {
            const references = { knowledge: bases, schemas: schemaNames, tools: new Set((agent.tools ?? []).map((t) => t.name)) };
            validateFlow(agent.flow, { ...references, mcpServers: new Set((agent.mcp_servers ?? []).map((m) => m.name)) });
          }
          return true;
        }) === true,
      ];
      (agent.knowledge ?? []).forEach((kb, k) => {
        if (!bases.has(kb)) problems.push({ path: `${at}/knowledge/${k}`, message: `names no knowledge base of the spec or of this project ("${kb}")` });
      });
      const toolSpecs = agent.tools ?? [];
      unique(toolSpecs, `${at}/tools`);
      const tools = toolSpecs.map((tool, j) => {
        if (tool.secret_ref) secretRefs.set(tool.secret_ref, [...(secretRefs.get(tool.secret_ref) ?? []), `${at}/tools/${j}/secret_ref`]);
        return attempt(`${at}/tools/${j}`, () => canonicalTool(tool));
      });
      const serverSpecs = agent.mcp_servers ?? [];
      unique(serverSpecs, `${at}/mcp_servers`);
      const servers = serverSpecs.map((server, j) => {
        if (server.secret_ref) secretRefs.set(server.secret_ref, [...(secretRefs.get(server.secret_ref) ?? []), `${at}/mcp_servers/${j}/secret_ref`]);
        return attempt(`${at}/mcp_servers/${j}`, () => canonicalMcpServer(server));
      });
      const rules = (agent.rules ?? []).map((rule, j) =>
        attempt(`${at}/rules/${j}`, () => {
          compileCondition(rule.condition, 'rule', '/condition');
          const canonical = canonicalRule(rule);
          checkRuleAction(canonical.rule_type, canonical.action);
          return canonical;
        }),
      );
      if (checks.includes(false) || tools.includes(undefined) || servers.includes(undefined) || rules.includes(undefined)) return;
      const settings = canonicalAgentSettings(agent, this.models);
      const mcpServers = (servers as CanonicalMcpServer[]).sort(byName);
      desired.agents.push({
        ...settings,
        tools: (tools as CanonicalTool[]).sort(byName),
        ...(mcpServers.length > 0 ? { mcp_servers: mcpServers } : {}),
        rules: (rules as CanonicalRule[]).sort(ruleOrder),
      });
    });
    for (const [name, paths] of secretRefs) {
      if (await this.services.secrets.exists(projectId, name)) continue;
      for (const path of paths) {
        problems.push({ path, message: `names no secret of this project ("${name}"); set it first with PUT /v1/secrets/${name} (exports never carry secret values)` });
      }
    }

    if (problems.length > 0) {
      const first = problems[0] as FieldError;
      throw badRequest(
        'invalid_spec',
        `The spec cannot be applied: ${first.path} ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}. Nothing was changed.`,
        problems,
      );
    }
    desired.agents.sort(byName);
    desired.knowledge.sort(byName);
    desired.schemas.sort(byName);
    desired.indexes.sort(byName);
    return desired;
  }

  /** A changed memory embedding model re-embeds the project's memories in the background (`ProjectSettings.update`). */
  private settingSteps(projectId: string, settings: CanonicalSettings | null, current: Current): Step[] {
    if (settings === null) return [];
    const model = settings.memory_embed_model;
    const change = { kind: 'setting' as const, name: 'memory_embed_model' };
    if (model === current.settings.memory_embed_model) return [{ change: { ...change, action: 'unchanged' } }];
    return [
      {
        change: {
          ...change,
          action: 'update',
          detail: `re-embeds the project's memories into ${model ?? "the server's model (MEMORY_EMBED_MODEL)"} in the background; progress in GET /v1/project/settings`,
        },
        run: () => this.services.settings.update(projectId, { memory_embed_model: model }),
      },
    ];
  }

  private knowledgeSteps(projectId: string, bases: CanonicalKnowledge[], current: Current): Step[] {
    return bases.map((kb) => {
      const existing = current.knowledge.get(kb.name);
      if (!existing) return { change: { kind: 'knowledge', name: kb.name, action: 'create' }, run: () => this.services.knowledge.create(projectId, kb) };
      const differ = changedKeys(existing, kb, KNOWLEDGE_KEYS);
      if (differ.length === 0) return { change: { kind: 'knowledge', name: kb.name, action: 'unchanged' } };
      return {
        change: {
          kind: 'knowledge',
          name: kb.name,
          action: 'conflict',
          detail: `The project's base differs in ${differ.join(', ')} and was left as it is: a base's documents are chunked and embedded with its settings, so it is not changed in place. Delete and re-create it (then upload its documents again), or change the spec.`,
        },
      };
    });
  }

  private schemaSteps(projectId: string, schemas: CanonicalSchema[], current: Current): Step[] {
    const service = this.services.schemas;
    return schemas.map(({ name, versions }): Step => {
      const have = current.schemas.get(name) ?? [];
      const diverged = have.findIndex((version, i) => i >= versions.length || changedKeys(version, versions[i] as CanonicalSchemaVersion, ['json_schema', 'embed_template', 'retention', 'description']).length > 0);
      if (diverged !== -1) {
        const detail =
          diverged >= versions.length
            ? `The project has ${have.length} versions and the spec ${versions.length}; versions are never removed, so the schema was left as it is.`
            : `Version ${diverged + 1} differs from the spec's; versions are immutable, so the schema was left as it is. Add the change to the spec as a new version instead.`;
        return { change: { kind: 'schema', name, action: 'conflict', detail } };
      }
      if (have.length === versions.length) return { change: { kind: 'schema', name, action: 'unchanged' } };
      const from = have.length + 1;
      const span = from === versions.length ? `version ${from}` : `versions ${from}–${versions.length}`;
      return {
        change: { kind: 'schema', name, action: have.length === 0 ? 'create' : 'update', detail: `publishes ${span}` },
        run: async () => {
          const missing = versions.slice(have.length);
          if (have.length === 0) await service.register(projectId, { name, ...(missing.shift() as CanonicalSchemaVersion) });
          for (const version of missing) await service.publish(projectId, name, version);
        },
      };
    });
  }

  private indexSteps(projectId: string, indexes: CanonicalIndex[], current: Current): Step[] {
    const service = this.services.indexes;
    return indexes.map((index): Step => {
      const existing = current.indexes.get(index.name);
      if (!existing) return { change: { kind: 'index', name: index.name, action: 'create' }, run: () => service.create(projectId, index) };
      const fixed = changedKeys(existing, index, ['dimension', 'embed', 'metric']);
      if (fixed.length > 0) {
        return {
          change: {
            kind: 'index',
            name: index.name,
            action: 'conflict',
            detail: `The project's index differs in ${fixed.join(', ')}, which its vectors depend on, so it was left as it is. Delete and re-create it, or change the spec.`,
          },
        };
      }
      const differ = changedKeys(existing, index, ['deletion_protection', 'tags']);
      if (differ.length === 0) return { change: { kind: 'index', name: index.name, action: 'unchanged' } };
      // configure() merges tags; the ones the spec drops are removed by setting them to ""
      const dropped = Object.keys(existing.tags).filter((key) => !(key in index.tags));
      const tags = { ...Object.fromEntries(dropped.map((key) => [key, ''])), ...index.tags };
      return {
        change: { kind: 'index', name: index.name, action: 'update', detail: `changes ${differ.join(', ')}` },
        run: () => service.configure(projectId, index.name, { deletion_protection: index.deletion_protection, tags }),
      };
    });
  }

  private agentSteps(projectId: string, agent: CanonicalAgent, current: Current): Step[] {
    const agents = this.services.agents;
    const name = agent.name;
    const existing = current.agents.get(name);
    const steps: Step[] = [];
    if (!existing) {
      const { tools, rules, mcp_servers: servers = [], ...settings } = agent;
      steps.push({ change: { kind: 'agent', name, action: 'create' }, run: () => agents.create(projectId, settings) });
      for (const tool of tools) steps.push({ change: { kind: 'tool', name: `${name}/${tool.name}`, action: 'create' }, run: () => agents.addTool(projectId, name, toolInput(tool)) });
      for (const server of servers) {
        steps.push({ change: { kind: 'mcp_server', name: `${name}/${server.name}`, action: 'create' }, run: () => agents.addMcpServer(projectId, name, serverInput(server)) });
      }
      for (const rule of rules) steps.push({ change: { kind: 'rule', name: ruleName(name, rule), action: 'create', detail: describeRule(rule) }, run: () => agents.addRule(projectId, name, rule) });
      return steps;
    }

    // The settings change after the tools do: a new flow may name a tool the spec adds.
    const differ = changedKeys(existing.agent, agent, AGENT_SETTINGS);
    const settingsStep: Step =
      differ.length === 0
        ? { change: { kind: 'agent', name, action: 'unchanged' } }
        : {
            change: { kind: 'agent', name, action: 'update', detail: `changes ${differ.join(', ')}` },
            run: () => agents.update(projectId, name, Object.fromEntries(differ.map((key) => [key, agent[key]])) as AgentInput),
          };

    // deletions first, so an agent at its tool or rule limit can take the spec's
    const tools = new Map(existing.agent.tools.map((tool) => [tool.name, tool]));
    for (const tool of existing.agent.tools) {
      if (agent.tools.some((t) => t.name === tool.name)) continue;
      steps.push({ change: { kind: 'tool', name: `${name}/${tool.name}`, action: 'delete' }, run: () => agents.deleteTool(projectId, name, tool.name) });
    }
    steps.push(...this.mcpServerSteps(projectId, name, existing.agent.mcp_servers ?? [], agent.mcp_servers ?? []));
    const matched = matchRules(existing.rules, agent.rules);
    for (const { id, rule } of matched.delete) {
      steps.push({ change: { kind: 'rule', name: ruleName(name, rule), action: 'delete', detail: describeRule(rule) }, run: () => agents.deleteRule(projectId, name, id) });
    }
    for (const tool of agent.tools) {
      const have = tools.get(tool.name);
      const change = { kind: 'tool' as const, name: `${name}/${tool.name}` };
      if (!have) steps.push({ change: { ...change, action: 'create' }, run: () => agents.addTool(projectId, name, toolInput(tool)) });
      else {
        const toolDiffer = changedKeys(have, tool, TOOL_KEYS);
        if (toolDiffer.length === 0) steps.push({ change: { ...change, action: 'unchanged' } });
        else {
          const input: ToolInput = toolInput(tool);
          delete input.name;
          steps.push({ change: { ...change, action: 'update', detail: `changes ${toolDiffer.join(', ')}` }, run: () => agents.updateTool(projectId, name, tool.name, input) });
        }
      }
    }
    steps.push(settingsStep);
    const ruleStep = (rule: CanonicalRule, action: ChangeAction, detail?: string, run?: Step['run']) => ({
      rule,
      step: { change: { kind: 'rule' as const, name: ruleName(name, rule), action, ...(detail === undefined ? {} : { detail }) }, run },
    });
    const ruleSteps = [
      ...matched.unchanged.map(({ rule }) => ruleStep(rule, 'unchanged')),
      ...matched.update.map(({ id, from, to }) => ruleStep(to, 'update', `changes ${changedKeys(from, to, RULE_KEYS).join(', ')}`, () => agents.updateRule(projectId, name, id, to))),
      ...matched.create.map((rule) => ruleStep(rule, 'create', describeRule(rule), () => agents.addRule(projectId, name, rule))),
    ];
    steps.push(...ruleSteps.sort((a, b) => ruleOrder(a.rule, b.rule)).map((r) => r.step));
    return steps;
  }

  /** An existing agent's MCP servers made to match the spec's: deletions first (the limit), then creations and changes. */
  private mcpServerSteps(projectId: string, agent: string, have: CanonicalMcpServer[], want: CanonicalMcpServer[]): Step[] {
    const agents = this.services.agents;
    const named = (server: string) => ({ kind: 'mcp_server' as const, name: `${agent}/${server}` });
    const steps: Step[] = have
      .filter((server) => !want.some((w) => w.name === server.name))
      .map((server) => ({ change: { ...named(server.name), action: 'delete' }, run: () => agents.deleteMcpServer(projectId, agent, server.name) }));
    for (const server of want) {
      const current = have.find((h) => h.name === server.name);
      if (!current) {
        steps.push({ change: { ...named(server.name), action: 'create' }, run: () => agents.addMcpServer(projectId, agent, serverInput(server)) });
        continue;
      }
      const differ = changedKeys(current, server, MCP_SERVER_KEYS);
      if (differ.length === 0) {
        steps.push({ change: { ...named(server.name), action: 'unchanged' } });
        continue;
      }
      // the url is always sent: without allowed_hosts in the spec, the hosts go back to its own
      const input: McpServerInput = serverInput(server);
      delete input.name;
      steps.push({
        change: { ...named(server.name), action: 'update', detail: `changes ${differ.join(', ')}` },
        run: () => agents.updateMcpServer(projectId, agent, server.name, input),
      });
    }
    return steps;
  }
}
