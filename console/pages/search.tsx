import { useEffect, useState } from 'preact/hooks';
import { api, ENTITY_TYPES, entityFilter, SEARCH_MODES, unwrap, type EntityType, type SearchBody, type SearchResult } from '../api';
import { EntityTypeField, ErrorNote, PageTitle } from '../components';
import { BASE, Link, memoryPath, navigate } from '../router';

type Mode = (typeof SEARCH_MODES)[number];
type Outcome = { results: SearchResult[] } | { error: unknown };

/** The search playground: one query in hybrid, dense and keyword side by side, each as curl too. */
export function SearchPage({ params }: { params: URLSearchParams }) {
  const type = (ENTITY_TYPES as readonly string[]).includes(params.get('type') ?? '') ? (params.get('type') as EntityType) : 'user';
  const id = params.get('id') ?? '';
  const query = params.get('q') ?? '';
  const [form, setForm] = useState({ type, id, query });
  const [outcomes, setOutcomes] = useState<Partial<Record<Mode, Outcome>> | null>(null);

  useEffect(() => setForm({ type, id, query }), [type, id, query]);
  useEffect(() => {
    if (id === '' || query === '') {
      setOutcomes(null);
      return;
    }
    let live = true;
    setOutcomes({});
    for (const mode of SEARCH_MODES) {
      unwrap(api.POST('/v3/memories/search', { body: searchBody(type, id, query, mode) }))
        .then((answer): Outcome => ({ results: answer.results ?? [] }))
        .catch((error: unknown): Outcome => ({ error }))
        .then((outcome) => live && setOutcomes((all) => ({ ...all, [mode]: outcome })));
    }
    return () => {
      live = false;
    };
  }, [type, id, query]);

  return (
    <>
      <PageTitle>Search playground</PageTitle>
      <p class="muted">One query run in each search mode, side by side, with each result's score.</p>
      <form
        class="card search-form"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(`${BASE}/search?${new URLSearchParams({ type: form.type, id: form.id.trim(), q: form.query }).toString()}`);
        }}
      >
        <div class="fields">
          <EntityTypeField id="search-type" value={form.type} onChange={(t) => setForm({ ...form, type: t })} />
          <div>
            <label for="search-id">Entity id</label>
            <input id="search-id" required value={form.id} onInput={(e) => setForm({ ...form, id: e.currentTarget.value })} />
          </div>
          <div class="grow">
            <label for="search-query">Query</label>
            <input id="search-query" type="search" required value={form.query} onInput={(e) => setForm({ ...form, query: e.currentTarget.value })} />
          </div>
          <button type="submit">Search</button>
        </div>
      </form>
      {outcomes !== null ? (
        <div class="modes">
          {SEARCH_MODES.map((mode) => (
            <ModeResults key={mode} mode={mode} outcome={outcomes[mode]} body={searchBody(type, id, query, mode)} />
          ))}
        </div>
      ) : null}
    </>
  );
}

function searchBody(type: EntityType, id: string, query: string, mode: Mode): SearchBody {
  return { query, filters: entityFilter(type, id), mode, top_k: 10 };
}

function ModeResults({ mode, outcome, body }: { mode: Mode; outcome: Outcome | undefined; body: SearchBody }) {
  const headingId = `mode-${mode}`;
  return (
    <section class="mode card" aria-labelledby={headingId}>
      <h2 id={headingId}>{mode}</h2>
      {outcome === undefined ? (
        <p class="muted" role="status">
          Searching…
        </p>
      ) : 'error' in outcome ? (
        <ErrorNote error={outcome.error} />
      ) : outcome.results.length === 0 ? (
        <p class="muted">No results.</p>
      ) : (
        <ol class="results">
          {outcome.results.map((r) => (
            <li key={r.id}>
              <Link href={memoryPath(r.id ?? '')}>{r.memory}</Link>
              <span class="score">
                <span class="visually-hidden">score </span>
                {typeof r.score === 'number' ? r.score.toFixed(4) : '—'}
              </span>
            </li>
          ))}
        </ol>
      )}
      <Curl body={body} />
    </section>
  );
}

/** The same request as a shell command, the key left in an environment variable. */
function Curl({ body }: { body: SearchBody }) {
  const [copied, setCopied] = useState(false);
  const json = JSON.stringify(body).replaceAll("'", "'\\''");
  const command = `curl -X POST '${location.origin}/v3/memories/search/' \\\n  -H "Authorization: Token $CAIRN_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d '${json}'`;
  return (
    <details class="curl">
      <summary>Request as curl</summary>
      <pre>{command}</pre>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(command).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy
      </button>
      <span role="status" class="muted">
        {copied ? ' Copied.' : ''}
      </span>
    </details>
  );
}
