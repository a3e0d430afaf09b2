import { useState } from 'preact/hooks';
import { api, ApiError, unwrap, type Agent, type paths } from '../api';
import { ErrorNote } from '../components';

// What of an agent has routes of its own: a new agent (POST /v1/agents), and its tools, MCP
// servers and rules, each added, edited and deleted as JSON through its own route. A 400 shows
// each field at fault next to the editor that sent it, and nothing is changed.

type JsonBody<P extends keyof paths, M extends 'post' | 'patch'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type NewAgent = JsonBody<'/v1/agents', 'post'>;
type Tool = NonNullable<Agent['tools']>[number];
type McpServer = NonNullable<Agent['mcp_servers']>[number];
type Rule = NonNullable<Agent['rules']>[number];

/** A 400's fields at fault, listed under the editor that sent it. */
export function Faults({ id, label, faults }: { id?: string; label: string; faults: ReadonlyArray<{ path: string; message: string }> }) {
  if (faults.length === 0) return null;
  return (
    <ul id={id} class="faults" aria-label={label}>
      {faults.map((f) => (
        <li key={`${f.path}:${f.message}`}>
          <code>{f.path || '/'}</code> {f.message}
        </li>
      ))}
    </ul>
  );
}

const faultsAt = (error: unknown, field: string) => (error instanceof ApiError ? error.errors.filter((e) => e.path === `/${field}`) : []);

/** The form that creates an agent: its name, and its instructions and model if given. */
export function CreateAgent({ onCreated }: { onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = ['name', 'instructions', 'model'];
  const elsewhere = error instanceof ApiError ? error.errors.filter((e) => !fields.some((f) => e.path === `/${f}`)) : [];

  async function create(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body: NewAgent = { name: name.trim() };
    if (instructions.trim() !== '') body.instructions = instructions;
    if (model.trim() !== '') body.model = model.trim();
    try {
      const created = await unwrap(api.POST('/v1/agents', { body }));
      onCreated(created.name ?? body.name);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const field = (id: string, key: string) => {
    const at = faultsAt(error, key);
    return {
      id,
      'aria-invalid': at.length > 0 ? ('true' as const) : undefined,
      'aria-describedby': at.length > 0 ? `${id}-faults` : undefined,
      faults:
        at.length > 0 ? (
          <p id={`${id}-faults`} class="faults">
            {at.map((f) => f.message).join('; ')}
          </p>
        ) : null,
    };
  };
  const n = field('new-agent-name', 'name');
  const i = field('new-agent-instructions', 'instructions');
  const m = field('new-agent-model', 'model');

  return (
    <form class="card" aria-labelledby="new-agent" onSubmit={create}>
      <h2 id="new-agent">New agent</h2>
      <label for={n.id}>Name</label>
      <input id={n.id} required value={name} aria-invalid={n['aria-invalid']} aria-describedby={n['aria-describedby']} onInput={(e) => setName(e.currentTarget.value)} />
      {n.faults}
      <label for={i.id}>Instructions (optional)</label>
      <textarea id={i.id} rows={3} value={instructions} aria-invalid={i['aria-invalid']} aria-describedby={i['aria-describedby']} onInput={(e) => setInstructions(e.currentTarget.value)} />
      {i.faults}
      <label for={m.id}>Model (optional)</label>
      <input id={m.id} placeholder="local" value={model} aria-invalid={m['aria-invalid']} aria-describedby={m['aria-describedby']} onInput={(e) => setModel(e.currentTarget.value)} />
      {m.faults}
      <ErrorNote error={error} />
      <Faults label="Other fields at fault" faults={elsewhere} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Create agent
        </button>
      </div>
    </form>
  );
}

/** One kind of an agent's parts: how it is listed, shown for editing, and sent to its routes. */
interface Kind<T extends { id?: string }> {
  key: string;
  title: string;
  /** "tool", "MCP server", "rule" */
  one: string;
  /** A minimal valid new one, as the README's Agents section shows it. */
  example: Record<string, unknown>;
  items: (agent: Agent) => T[];
  describe: (item: T) => string;
  /** The item as the API shows it, in the shape its PATCH takes. */
  editable: (item: T) => Record<string, unknown>;
  add: (agent: string, body: unknown) => Promise<unknown>;
  update: (agent: string, id: string, body: unknown) => Promise<unknown>;
  remove: (agent: string, id: string) => Promise<unknown>;
}

const SHOWN_ONLY = ['id', 'created_at', 'updated_at'];
const withoutShownOnly = (item: object) => Object.fromEntries(Object.entries(item).filter(([k]) => !SHOWN_ONLY.includes(k)));

const TOOLS: Kind<Tool> = {
  key: 'tool',
  title: 'Tools',
  one: 'tool',
  example: {
    name: 'lookup_order',
    description: 'Look up an order by its order id',
    http: { url: 'https://shop.example.com/orders/{order_id}', method: 'GET' },
    parameters: { type: 'object', properties: { order_id: { type: 'integer' } }, required: ['order_id'] },
  },
  items: (agent) => agent.tools ?? [],
  describe: (t) => `${t.name ?? ''}: ${t.http_method ?? 'GET'} ${t.http_url ?? ''}`,
  editable: (t) => {
    const { http_url, http_method, ...rest } = withoutShownOnly(t);
    return { ...rest, http: { url: http_url, method: http_method } };
  },
  add: (name, body) => unwrap(api.POST('/v1/agents/{name}/tools', { params: { path: { name } }, body: body as JsonBody<'/v1/agents/{name}/tools', 'post'> })),
  update: (name, tool, body) =>
    unwrap(api.PATCH('/v1/agents/{name}/tools/{tool}', { params: { path: { name, tool } }, body: body as JsonBody<'/v1/agents/{name}/tools/{tool}', 'patch'> })),
  remove: (name, tool) => unwrap(api.DELETE('/v1/agents/{name}/tools/{tool}', { params: { path: { name, tool } } })),
};

const MCP_SERVERS: Kind<McpServer> = {
  key: 'mcp-server',
  title: 'MCP servers',
  one: 'MCP server',
  example: { name: 'shop', url: 'https://mcp.shop.example.com/mcp', tools: ['get_order', 'track_parcel'], rate_per_min: 30 },
  items: (agent) => agent.mcp_servers ?? [],
  describe: (s) => `${s.name ?? ''}: ${s.url ?? ''}`,
  editable: withoutShownOnly,
  add: (name, body) => unwrap(api.POST('/v1/agents/{name}/mcp-servers', { params: { path: { name } }, body: body as JsonBody<'/v1/agents/{name}/mcp-servers', 'post'> })),
  update: (name, server, body) =>
    unwrap(
      api.PATCH('/v1/agents/{name}/mcp-servers/{server}', {
        params: { path: { name, server } },
        body: body as JsonBody<'/v1/agents/{name}/mcp-servers/{server}', 'patch'>,
      }),
    ),
  remove: (name, server) => unwrap(api.DELETE('/v1/agents/{name}/mcp-servers/{server}', { params: { path: { name, server } } })),
};

const RULES: Kind<Rule> = {
  key: 'rule',
  title: 'Rules',
  one: 'rule',
  example: { rule_type: 'escalation', condition: 'message.lowerAscii().contains("human")', action: 'A person will take over.', priority: 10 },
  items: (agent) => agent.rules ?? [],
  describe: (r) => `${r.rule_type ?? ''} when ${r.condition ?? ''}${r.action ? `: ${r.action}` : ''}`,
  editable: withoutShownOnly,
  add: (name, body) => unwrap(api.POST('/v1/agents/{name}/rules', { params: { path: { name } }, body: body as JsonBody<'/v1/agents/{name}/rules', 'post'> })),
  update: (name, id, body) => unwrap(api.PATCH('/v1/agents/{name}/rules/{id}', { params: { path: { name, id } }, body: body as JsonBody<'/v1/agents/{name}/rules/{id}', 'patch'> })),
  remove: (name, id) => unwrap(api.DELETE('/v1/agents/{name}/rules/{id}', { params: { path: { name, id } } })),
};

/** The agent's tools, MCP servers and rules, each kind in a section of its own. */
export function AgentParts({ agent, onChanged }: { agent: Agent; onChanged: () => void }) {
  return (
    <>
      <Parts kind={TOOLS} agent={agent} onChanged={onChanged} />
      <Parts kind={MCP_SERVERS} agent={agent} onChanged={onChanged} />
      <Parts kind={RULES} agent={agent} onChanged={onChanged} />
    </>
  );
}

function Parts<T extends { id?: string; updated_at?: string }>({ kind, agent, onChanged }: { kind: Kind<T>; agent: Agent; onChanged: () => void }) {
  const name = agent.name ?? '';
  const items = kind.items(agent);
  const [adding, setAdding] = useState(false);
  return (
    <section aria-labelledby={`${kind.key}s`}>
      <h2 id={`${kind.key}s`}>{kind.title}</h2>
      {items.length === 0 ? <p class="muted">No {kind.one}s.</p> : null}
      <ul class="parts">
        {items.map((item) => (
          <Part key={`${item.id ?? ''}:${item.updated_at ?? ''}`} kind={kind} agent={name} item={item} onChanged={onChanged} />
        ))}
      </ul>
      {adding ? (
        <JsonEditor
          id={`new-${kind.key}`}
          label={`New ${kind.one} (JSON)`}
          initial={JSON.stringify(kind.example, null, 2)}
          submit={`Add ${kind.one}`}
          send={(body) => kind.add(name, body)}
          onDone={() => (setAdding(false), onChanged())}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <button type="button" onClick={() => setAdding(true)}>
          Add {kind.one === 'MCP server' ? 'an' : 'a'} {kind.one}
        </button>
      )}
    </section>
  );
}

function Part<T extends { id?: string }>({ kind, agent, item, onChanged }: { kind: Kind<T>; agent: string; item: T; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const id = item.id ?? '';
  const what = kind.describe(item);

  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await kind.remove(agent, id);
      onChanged();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <li class="card part">
      <p>
        <code>{what}</code>
      </p>
      {editing ? (
        <JsonEditor
          id={`${kind.key}-${id}`}
          label={`The ${kind.one} ${what} (JSON)`}
          initial={JSON.stringify(kind.editable(item), null, 2)}
          submit="Save"
          send={(body) => kind.update(agent, id, body)}
          onDone={() => (setEditing(false), onChanged())}
          onCancel={() => setEditing(false)}
        />
      ) : confirming ? (
        <div class="actions" role="group" aria-label={`Delete the ${kind.one} ${what}?`}>
          <span>Delete this {kind.one}?</span>
          <button type="button" class="destructive" disabled={busy} onClick={() => void remove()}>
            Delete {kind.one} for good
          </button>
          <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      ) : (
        <div class="actions">
          <button type="button" aria-label={`Edit the ${kind.one} ${what}`} onClick={() => setEditing(true)}>
            Edit
          </button>
          <button type="button" aria-label={`Delete the ${kind.one} ${what}`} onClick={() => setConfirming(true)}>
            Delete
          </button>
        </div>
      )}
      <ErrorNote error={error} />
    </li>
  );
}

/** A JSON body edited in a textarea and sent; a 400's fields at fault are shown under it. */
function JsonEditor(props: { id: string; label: string; initial: string; submit: string; send: (body: unknown) => Promise<unknown>; onDone: () => void; onCancel: () => void }) {
  const { id, label } = props;
  const [text, setText] = useState(props.initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const faulted = error instanceof ApiError && error.errors.length > 0;

  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      setError(new Error(`Not JSON: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    setBusy(true);
    try {
      await props.send(body);
      props.onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={save}>
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="code"
        rows={Math.min(16, text.split('\n').length + 1)}
        spellcheck={false}
        aria-invalid={error !== null ? 'true' : undefined}
        aria-describedby={faulted ? `${id}-faults` : undefined}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <ErrorNote error={error} />
      <Faults id={`${id}-faults`} label={`Fields at fault in ${label.replace(/ \(JSON\)$/, '')}`} faults={error instanceof ApiError ? error.errors : []} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {props.submit}
        </button>
        <button type="button" disabled={busy} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
