import { useEffect, useState } from 'preact/hooks';
import { api, signedOut, unwrap, type ApiKey, type CreatedKey, type ProjectSettings, type UsageReport } from '../api';
import { ConfirmAction, ErrorNote, Loading, PageTitle, Time, useLoaded, useSubmit } from '../components';
import { CopyButton } from '../copy-button';

/** The project: its API keys, its memory embedding model, how to reach it over MCP, its usage. */
export function ProjectPage() {
  return (
    <>
      <PageTitle>Project</PageTitle>
      <ApiKeys />
      <Embedding />
      <McpSnippet />
      <Usage />
    </>
  );
}

/** The project's keys: a new key is shown once, here; revoking asks once more. */
function ApiKeys() {
  const [session, setSession] = useState<string | null>(null);
  const keys = useLoaded(async () => (await unwrap(api.GET('/v1/api-keys', { params: { query: { limit: 100 } } }))).api_keys ?? [], () => false, []);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [name, setName] = useState('');
  useEffect(() => {
    unwrap(api.GET('/console/api/session')).then(
      (s) => setSession(s.key_id ?? null),
      () => undefined,
    );
  }, []);
  const create = useSubmit(async () => {
    setCreated(await unwrap(api.POST('/v1/api-keys', { body: { name: name.trim() } })));
    setName('');
    keys.reload();
  });

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <ErrorNote error={keys.error} />
      {keys.value === null && keys.error === null ? <Loading /> : null}
      {keys.value !== null ? (
        <table>
          <caption class="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.value.map((k) => (
              <KeyRow key={k.id} apiKey={k} own={k.id === session} onRevoked={keys.reload} />
            ))}
          </tbody>
        </table>
      ) : null}
      {created ? (
        <div class="card new-key" role="status">
          <p>
            <strong>New key “{created.name}”.</strong> Copy it now: it will not be shown again.
          </p>
          <div class="fields">
            <div class="grow">
              <label for="new-key">The new key</label>
              <input id="new-key" readOnly value={created.key} spellcheck={false} onFocus={(e) => e.currentTarget.select()} />
            </div>
            <CopyButton text={created.key ?? ''} label="Copy key" />
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      <form class="inline-form" aria-labelledby="create-key" onSubmit={create.submit}>
        <h3 id="create-key">Create a key</h3>
        <div class="fields">
          <div class="grow">
            <label for="key-name">Name</label>
            <input id="key-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </div>
        <ErrorNote error={create.error} />
      </form>
    </section>
  );
}

/** One key; its revocation asks once more, and revoking the key this session uses signs out. */
function KeyRow({ apiKey, own, onRevoked }: { apiKey: ApiKey; own: boolean; onRevoked: () => void }) {
  const [error, setError] = useState<unknown>(null);
  async function revoke() {
    try {
      await unwrap(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: apiKey.id ?? '' } } }));
      if (own) {
        // the session ended with its key: clear the cookie, then show the sign-in page
        await unwrap(api.DELETE('/console/api/session')).catch(() => undefined);
        signedOut();
      } else onRevoked();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <tr>
      <td>
        {apiKey.name}
        {own ? <span class="muted"> (this session)</span> : null}
      </td>
      <td>
        <code>{apiKey.prefix}…</code>
      </td>
      <td>
        <Time value={apiKey.created_at} />
      </td>
      <td>
        <ErrorNote error={error} />
        <ConfirmAction
          action="Revoke"
          name={`Revoke ${apiKey.name ?? ''}`}
          group={`Confirm revoking ${apiKey.name ?? ''}`}
          question={own ? 'Revoke the key this session uses, and sign out?' : 'Revoke this key for good?'}
          confirm="Revoke for good"
          onConfirm={revoke}
        />
      </td>
    </tr>
  );
}

/** The memory embedding model, and the progress of a re-embedding into another (looked at again every second while it runs). */
function Embedding() {
  const settings = useLoaded(() => unwrap(api.GET('/v1/project/settings')), (s) => s.memory_embedding?.status === 'migrating', []);
  const [model, setModel] = useState('');
  const change = useSubmit(async () => {
    await unwrap(api.PATCH('/v1/project/settings', { body: { memory_embed_model: model.trim() === '' ? null : model.trim() } }));
    setModel('');
    settings.reload();
  });
  const embedding: ProjectSettings['memory_embedding'] = settings.value?.memory_embedding;
  return (
    <section aria-labelledby="embedding-title">
      <h2 id="embedding-title">Memory embedding model</h2>
      <ErrorNote error={settings.error} />
      {settings.value === null && settings.error === null ? <Loading /> : null}
      {embedding ? (
        <dl class="facts">
          <dt>In use</dt>
          <dd>
            <code>{embedding.model}</code>
            {settings.value?.memory_embed_model === null ? <span class="muted"> (the server's default)</span> : null}
          </dd>
          <dt>Status</dt>
          <dd>
            <span class={`status status-${embedding.status === 'ready' ? 'indexed' : embedding.status === 'migrating' ? 'pending' : 'failed'}`}>{embedding.status}</span>
          </dd>
          {embedding.target ? (
            <>
              <dt>Re-embedding into</dt>
              <dd>
                <code>{embedding.target}</code> since <Time value={embedding.started_at} />
              </dd>
              <dt>Progress</dt>
              <dd>
                <progress max={embedding.total ?? 1} value={embedding.embedded ?? 0} aria-label="Re-embedding progress" />{' '}
                {embedding.embedded ?? 0} of {embedding.total ?? '?'} memories
              </dd>
            </>
          ) : null}
          {embedding.error ? (
            <>
              <dt>Error</dt>
              <dd class="error">{embedding.error}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      <form class="inline-form" aria-labelledby="change-model" onSubmit={change.submit}>
        <h3 id="change-model">Change the model</h3>
        <p class="muted">Every memory is embedded again in the background; search answers from the current model until it is done. Empty: the server's default.</p>
        <div class="fields">
          <div class="grow">
            <label for="embed-model">Model (provider/model)</label>
            <input id="embed-model" value={model} placeholder="local" onInput={(e) => setModel(e.currentTarget.value)} />
          </div>
          <button type="submit" disabled={change.busy}>
            Re-embed
          </button>
        </div>
        <ErrorNote error={change.error} />
      </form>
    </section>
  );
}

/** How an MCP client reaches this server; the key stays a placeholder, never this session's. */
function McpSnippet() {
  const url = `${location.origin}/mcp`;
  const config = JSON.stringify({ mcpServers: { cairn: { type: 'http', url, headers: { Authorization: 'Token cairn_XXXXXXXX' } } } }, null, 2);
  const python = `# CAIRN_KEY=cairn_… python mcp_demo.py
import asyncio, os
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main():
    headers = {"Authorization": f"Token {os.environ['CAIRN_KEY']}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client("${url}", http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                print([tool.name for tool in (await session.list_tools()).tools])

asyncio.run(main())
`;
  return (
    <section aria-labelledby="mcp-title">
      <h2 id="mcp-title">MCP</h2>
      <p>
        MCP clients reach this server at <code>{url}</code> with one of the project's API keys (put yours in place of <code>cairn_XXXXXXXX</code>).
      </p>
      <div class="snippet">
        <h3 id="mcp-json">Client configuration</h3>
        <pre aria-labelledby="mcp-json" tabIndex={0}>{config}</pre>
        <CopyButton text={config} label="Copy configuration" />
      </div>
      <div class="snippet">
        <h3 id="mcp-python">Python (pip install mcp)</h3>
        <pre aria-labelledby="mcp-python" tabIndex={0}>{python}</pre>
        <CopyButton text={python} label="Copy Python" />
      </div>
    </section>
  );
}

/** Metered operations by day over the last 30 days. */
function Usage() {
  const usage = useLoaded<UsageReport>(() => unwrap(api.GET('/v1/usage')), () => false, []);
  const report = usage.value;
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <ErrorNote error={usage.error} />
      {report === null && usage.error === null ? <Loading /> : null}
      {report ? (
        <>
          <p>
            From {report.from} to {report.to}:{' '}
            {Object.entries(report.totals ?? {}).map(([operation, count]) => (
              <span key={operation} class="total">
                <code>{operation}</code> <strong>{count}</strong>
              </span>
            ))}
          </p>
          {(report.days ?? []).length > 0 ? (
            <table>
              <caption class="visually-hidden">Usage by day</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Operation</th>
                  <th scope="col" class="number">
                    Count
                  </th>
                </tr>
              </thead>
              <tbody>
                {(report.days ?? []).map((d) => (
                  <tr key={`${d.day}:${d.operation}`}>
                    <td>{d.day}</td>
                    <td>
                      <code>{d.operation}</code>
                    </td>
                    <td class="number">{d.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
