import { useState } from 'preact/hooks';
import { api, ApiError, unwrap, type Agent, type AgentChanges, type ChatResponse, type RunDetail, type RunSummary } from '../api';
import { ErrorNote, Loading, PageTitle, Time, useLoaded } from '../components';
import { BASE, Link, navigate } from '../router';
import { AgentParts, CreateAgent, Faults } from './agent-parts';
import { documentPath } from './knowledge';

// Agents: the list; one agent's definition (edited as JSON, the API's validation shown at the
// fields it names), a chat playground with each turn's citations and trace, and its runs.

export const agentPath = (name?: string) => (name ? `${BASE}/agents/${encodeURIComponent(name)}` : `${BASE}/agents`);
export const runPath = (name: string, run: string) => `${agentPath(name)}/runs/${encodeURIComponent(run)}`;

/** The fields of an agent a PATCH sets: the definition the editor shows. */
const EDITABLE = ['name', 'instructions', 'model', 'fallback_message', 'ui_actions', 'guardrails', 'tool_policy', 'flow', 'stream_mode', 'knowledge'] as const satisfies ReadonlyArray<keyof AgentChanges>;
const definitionOf = (agent: Agent) => JSON.stringify(Object.fromEntries(EDITABLE.filter((k) => k in agent).map((k) => [k, agent[k]])), null, 2);

type Trace = NonNullable<ChatResponse['trace']> & Pick<RunDetail, 'tokens_in' | 'tokens_out' | 'latency_ms' | 'llm_calls'>;
type Citation = NonNullable<ChatResponse['citations']>[number];

export function AgentsPage() {
  const { value: agents, error } = useLoaded(async () => (await unwrap(api.GET('/v1/agents', { params: { query: { limit: 100 } } }))).agents ?? [], () => false, []);
  return (
    <>
      <PageTitle>Agents</PageTitle>
      <p class="muted">Each agent's rules, guardrails, tools and knowledge; open one to edit it, chat with it and read its runs.</p>
      <ErrorNote error={error} />
      {agents === null && error === null ? <Loading /> : null}
      <CreateAgent onCreated={(created) => navigate(agentPath(created))} />
      {agents !== null && agents.length === 0 ? <p>No agents yet: create one here, through the API (POST /v1/agents) or a project spec.</p> : null}
      {agents !== null && agents.length > 0 ? (
        <table>
          <caption class="visually-hidden">Agents, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Model</th>
              <th scope="col">Knowledge</th>
              <th scope="col" class="number">
                Tools
              </th>
              <th scope="col" class="number">
                Rules
              </th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.id}>
                <td>
                  <Link href={agentPath(a.name ?? '')}>{a.name}</Link>
                </td>
                <td>{a.model}</td>
                <td>{a.knowledge && a.knowledge.length > 0 ? a.knowledge.join(', ') : <span class="muted">none</span>}</td>
                <td class="number">{(a.tools?.length ?? 0) + (a.mcp_servers?.length ?? 0)}</td>
                <td class="number">{a.rules?.length ?? 0}</td>
                <td>
                  <Time value={a.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

/** One agent: its definition, a chat playground, its runs. */
export function AgentPage({ name }: { name: string }) {
  const { value: agent, error, reload } = useLoaded(() => unwrap(api.GET('/v1/agents/{name}', { params: { path: { name } } })), () => false, [name]);
  const runs = useLoaded(async () => (await unwrap(api.GET('/v1/agents/{name}/runs', { params: { path: { name }, query: { limit: 20 } } }))).runs ?? [], () => false, [name]);
  return (
    <>
      <PageTitle>Agent {name}</PageTitle>
      <p>
        <Link href={agentPath()}>All agents</Link>
      </p>
      <ErrorNote error={error} />
      {agent === null ? (
        error === null ? (
          <Loading />
        ) : null
      ) : (
        <>
          <Definition key={agent.updated_at} agent={agent} onSaved={reload} />
          <AgentParts agent={agent} onChanged={reload} />
          <Playground agent={agent} onTurn={runs.reload} />
          <Runs name={name} runs={runs.value} error={runs.error} />
        </>
      )}
    </>
  );
}

function Definition({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const original = definitionOf(agent);
  const [text, setText] = useState(original);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const faults = error instanceof ApiError ? error.errors : [];

  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    setSaved(false);
    let changes: AgentChanges;
    try {
      changes = JSON.parse(text) as AgentChanges;
    } catch (err) {
      setError(new Error(`The definition is not JSON: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    setBusy(true);
    try {
      const updated = await unwrap(api.PATCH('/v1/agents/{name}', { params: { path: { name: agent.name ?? '' } }, body: changes }));
      setSaved(true);
      if (updated.name !== agent.name) navigate(agentPath(updated.name ?? ''));
      else onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card" aria-labelledby="definition" onSubmit={save}>
      <h2 id="definition">Definition</h2>
      <label for="agent-definition">Definition (JSON)</label>
      <p class="hint" id="agent-definition-hint">
        Each field sent replaces the stored one whole. Tools, MCP servers and rules have their own routes: edit them below.
      </p>
      <textarea
        id="agent-definition"
        class="code"
        rows={16}
        spellcheck={false}
        aria-describedby={`agent-definition-hint${faults.length > 0 ? ' agent-definition-faults' : ''}`}
        aria-invalid={error !== null ? 'true' : undefined}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <ErrorNote error={error} />
      <Faults id="agent-definition-faults" label="Fields at fault" faults={faults} />
      <div class="actions">
        <button type="submit" disabled={busy || text === original}>
          Save
        </button>{' '}
        <button type="button" disabled={busy || text === original} onClick={() => (setText(original), setError(null))}>
          Undo changes
        </button>
        <span role="status" class="muted">
          {saved ? ' Saved.' : ''}
        </span>
      </div>
    </form>
  );
}


interface Turn {
  message: string;
  answer: string;
  response: ChatResponse | null;
  error: unknown;
}

/** The agent's server-sent events as {event, data} blocks. */
async function* serverEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      yield { event, data: data.join('\n') };
    }
  }
}

/** Chat turns with the agent, one conversation, each streamed when asked, with its citations and trace. */
function Playground({ agent, onTurn }: { agent: Agent; onTurn: () => void }) {
  const name = agent.name ?? '';
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [stream, setStream] = useState(agent.stream_mode === 'sse');
  const [busy, setBusy] = useState(false);
  const conversation = turns.map((t) => t.response?.conversation_id).find((id) => id !== undefined);

  async function send(event: Event) {
    event.preventDefault();
    const text = message.trim();
    if (text === '' || busy) return;
    setBusy(true);
    setMessage('');
    const at = turns.length;
    const change = (patch: (turn: Turn) => Partial<Turn>) => setTurns((all) => all.map((t, i) => (i === at ? { ...t, ...patch(t) } : t)));
    setTurns((all) => [...all, { message: text, answer: '', response: null, error: null }]);
    const body = { messages: [{ role: 'user' as const, content: text }], conversation_id: conversation, stream };
    try {
      if (stream) {
        const answered = await api.POST('/v1/agents/{name}/chat', { params: { path: { name } }, body, parseAs: 'stream' });
        if (!answered.response.ok || !answered.data) await unwrap(Promise.resolve(answered));
        for await (const { event: kind, data } of serverEvents(answered.data as ReadableStream<Uint8Array>)) {
          if (kind === 'delta') change((t) => ({ answer: t.answer + (JSON.parse(data) as { text: string }).text }));
          else if (kind === 'response') change(() => ({ response: JSON.parse(data) as ChatResponse }));
          else if (kind === 'error') {
            const failure = JSON.parse(data) as { detail: string; code: string };
            throw new ApiError(200, failure.code, failure.detail);
          }
        }
      } else {
        // without stream the answer is JSON, never the event stream the same route can answer
        const response = (await unwrap(api.POST('/v1/agents/{name}/chat', { params: { path: { name } }, body }))) as ChatResponse;
        change(() => ({ response }));
      }
    } catch (err) {
      change(() => ({ error: err }));
    } finally {
      setBusy(false);
      onTurn();
    }
  }

  return (
    <section aria-labelledby="playground">
      <h2 id="playground">Chat playground</h2>
      {conversation ? (
        <p class="muted">
          Conversation <code>{conversation}</code>{' '}
          <button type="button" onClick={() => setTurns([])} disabled={busy}>
            New conversation
          </button>
        </p>
      ) : null}
      <ol class="turns">
        {turns.map((t, i) => (
          <li key={i} class="turn card">
            <p class="said">
              <strong>You:</strong> {t.message}
            </p>
            <div class="said">
              <strong>{name}:</strong> <span class="answer">{t.response?.message?.content ?? t.answer}</span>
              {t.response === null && t.error === null ? <span class="muted"> (answering…)</span> : null}
            </div>
            <ErrorNote error={t.error} />
            {t.response ? <TurnDetails response={t.response} agent={name} /> : null}
          </li>
        ))}
      </ol>
      <form class="card" onSubmit={send}>
        <label for="chat-message">Message</label>
        <textarea id="chat-message" rows={2} required value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Send
          </button>{' '}
          <label class="check">
            <input type="checkbox" checked={stream} onChange={(e) => setStream(e.currentTarget.checked)} /> Stream the answer
          </label>
        </div>
      </form>
    </section>
  );
}

function TurnDetails({ response, agent }: { response: ChatResponse; agent: string }) {
  const trace: Trace = { ...response.trace, tokens_in: response.usage?.tokens_in, tokens_out: response.usage?.tokens_out };
  return (
    <>
      <Citations citations={response.citations ?? []} />
      {response.escalated ? <p>Escalated to a person.</p> : null}
      {response.ui_actions && response.ui_actions.length > 0 ? <p>UI actions: {response.ui_actions.map((a) => a.type).join(', ')}</p> : null}
      <details class="trace-details">
        <summary>Trace of this turn</summary>
        <TraceView trace={trace} />
      </details>
      {response.run_id ? (
        <p>
          <Link href={runPath(agent, response.run_id)}>Open this run</Link>
        </p>
      ) : null}
    </>
  );
}

function Citations({ citations }: { citations: Citation[] }) {
  if (citations.length === 0) return <p class="muted">No citations.</p>;
  return (
    <div>
      <h3>Citations</h3>
      <ol class="citations">
        {citations.map((c, i) => (
          <li key={`${c.chunk_id ?? ''}:${i}`}>
            <CitedPassage passage={c} />
          </li>
        ))}
      </ol>
    </div>
  );
}

/** A cited or retrieved passage: a link that opens its chunk in its document. */
function CitedPassage({ passage }: { passage: Citation }) {
  return (
    <>
      <Link href={documentPath(passage.knowledge_base ?? '', passage.document_id ?? '', passage.chunk_id)}>
        {passage.filename} ({passage.knowledge_base})
      </Link>
      <span class="score">
        <span class="visually-hidden">score </span>
        {typeof passage.score === 'number' ? passage.score.toFixed(4) : '—'}
      </span>
      <p class="hit-text muted">{passage.text}</p>
    </>
  );
}

type Verdict = Trace['input_verdict'];

function VerdictView({ label, verdict }: { label: string; verdict: Verdict }) {
  if (!verdict) return null;
  return (
    <div>
      <h4>{label}</h4>
      <p>
        {verdict.allowed === false ? 'Blocked' : 'Allowed'}
        {typeof verdict.risk === 'number' ? `, risk ${verdict.risk.toFixed(2)}` : ''}
        {verdict.failed_open ? ', failed open' : ''}
        {verdict.error ? ` (${verdict.error})` : ''}
      </p>
      {verdict.checks && verdict.checks.length > 0 ? (
        <table>
          <caption class="visually-hidden">{label}: each check's score</caption>
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col" class="number">
                Score
              </th>
              <th scope="col">Flagged</th>
            </tr>
          </thead>
          <tbody>
            {verdict.checks.map((c) => (
              <tr key={c.name}>
                <td>{c.name}</td>
                <td class="number">{typeof c.score === 'number' ? c.score.toFixed(2) : '—'}</td>
                <td>{c.flagged ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

/** What a turn did: rules fired, guardrail verdicts, retrieval, tool and MCP calls, tokens and timings. */
function TraceView({ trace }: { trace: Trace }) {
  const rules = trace.matched_rules ?? [];
  const calls = trace.tool_calls ?? [];
  const retrieved = trace.retrieved ?? [];
  const timings = Object.entries(trace.timings_ms ?? {});
  return (
    <div class="trace">
      <h4>Tokens</h4>
      <p>
        {trace.tokens_in ?? 0} in, {trace.tokens_out ?? 0} out
        {typeof trace.llm_calls === 'number' ? `, ${trace.llm_calls} model call${trace.llm_calls === 1 ? '' : 's'}` : ''}
        {typeof trace.latency_ms === 'number' ? `, ${trace.latency_ms} ms` : ''}
      </p>
      {timings.length > 0 ? (
        <>
          <h4>Timings</h4>
          <p>{timings.map(([stage, ms]) => `${stage} ${String(ms)} ms`).join(', ')}</p>
        </>
      ) : null}
      <h4>Rules fired</h4>
      {rules.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {rules.map((r) => (
            <li key={r.id}>
              {r.rule_type} when <code>{r.condition}</code>
              {r.action ? `: ${r.action}` : ''}
            </li>
          ))}
        </ul>
      )}
      <VerdictView label="Input guardrails" verdict={trace.input_verdict} />
      <VerdictView label="Output guardrails" verdict={trace.output_verdict} />
      <h4>Tool and MCP calls</h4>
      {calls.length === 0 ? (
        <p class="muted">None{trace.available_tools && trace.available_tools.length > 0 ? ` (offered: ${trace.available_tools.join(', ')})` : ''}.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Tool and MCP calls, in order</caption>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Time (ms)
              </th>
              <th scope="col">Arguments</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((c, i) => (
              <tr key={i}>
                <td>{c.tool}</td>
                <td>
                  {c.status}
                  {c.http_status ? ` (HTTP ${c.http_status})` : ''}
                </td>
                <td class="number">{c.duration_ms}</td>
                <td class="memory-text">
                  <code>{c.arguments}</code>
                </td>
                <td class="memory-text">{c.result}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>Retrieved passages</h4>
      {retrieved.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ol class="citations">
          {retrieved.map((c, i) => (
            <li key={`${c.chunk_id ?? ''}:${i}`}>
              <CitedPassage passage={c} />
            </li>
          ))}
        </ol>
      )}
      {trace.flow_path && trace.flow_path.length > 0 ? (
        <>
          <h4>Flow path</h4>
          <p>{trace.flow_path.join(' → ')}</p>
        </>
      ) : null}
      {trace.plan && trace.plan.length > 0 ? (
        <>
          <h4>Plan</h4>
          <p>{trace.plan.join(' → ')}</p>
        </>
      ) : null}
      {trace.errors && trace.errors.length > 0 ? (
        <>
          <h4>Errors</h4>
          <pre class="json">{JSON.stringify(trace.errors, null, 2)}</pre>
        </>
      ) : null}
    </div>
  );
}

function Runs({ name, runs, error }: { name: string; runs: RunSummary[] | null; error: unknown }) {
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Runs</h2>
      <ErrorNote error={error} />
      {runs === null ? null : runs.length === 0 ? (
        <p class="muted">No runs yet.</p>
      ) : (
        <table>
          <caption class="visually-hidden">The agent's latest runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Conversation</th>
              <th scope="col" class="number">
                Tokens in / out
              </th>
              <th scope="col" class="number">
                Time (ms)
              </th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link href={runPath(name, r.id ?? '')}>
                    <Time value={r.created_at} />
                  </Link>
                </td>
                <td>{r.status}</td>
                <td>
                  <code>{r.conversation_id}</code>
                </td>
                <td class="number">
                  {r.tokens_in} / {r.tokens_out}
                </td>
                <td class="number">{r.latency_ms}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** One run: its messages, answer and trace. */
export function RunPage({ name, id }: { name: string; id: string }) {
  const { value: run, error } = useLoaded(() => unwrap(api.GET('/v1/agents/{name}/runs/{runId}', { params: { path: { name, runId: id } } })), () => false, [name, id]);
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  const answer = run?.response?.message;
  return (
    <>
      <PageTitle>Run of {name}</PageTitle>
      <p>
        <Link href={agentPath(name)}>Agent {name}</Link>
      </p>
      <ErrorNote error={error} />
      {run === null ? (
        error === null ? (
          <Loading />
        ) : null
      ) : (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{run.status}</dd>
            <dt>When</dt>
            <dd>
              <Time value={run.created_at} />
            </dd>
            <dt>Conversation</dt>
            <dd>
              <code>{run.conversation_id}</code>
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{run.id}</code>
            </dd>
          </dl>
          <h2>Messages</h2>
          <ol class="turns">
            {(run.messages ?? []).map((m, i) => (
              <li key={i} class="said">
                <strong>{text(m.role)}:</strong> {text(m.content)}
              </li>
            ))}
            {typeof answer === 'object' && answer !== null && 'content' in answer ? (
              <li class="said">
                <strong>{name}:</strong> <span class="answer">{text(answer.content)}</span>
              </li>
            ) : null}
          </ol>
          {run.error ? <pre class="json error">{JSON.stringify(run.error, null, 2)}</pre> : null}
          <h2>Trace</h2>
          <TraceView
            trace={{
              matched_rules: run.matched_rules,
              input_verdict: run.input_verdict,
              output_verdict: run.output_verdict,
              retrieved: run.retrieved,
              tool_calls: run.tool_calls,
              plan: run.plan,
              flow_path: run.flow_path,
              tokens_in: run.tokens_in,
              tokens_out: run.tokens_out,
              llm_calls: run.llm_calls,
              latency_ms: run.latency_ms,
            }}
          />
        </>
      )}
    </>
  );
}
