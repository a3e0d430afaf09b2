import { useEffect, useState } from 'preact/hooks';
import { api, ENTITY_TYPES, entityFilter, SEARCH_MODES, unwrap, type EntityType, type RerankReport, type SearchBody, type SearchResult } from '../api';
import { EntityTypeField, ErrorNote, PageTitle } from '../components';
import { BASE, Link, memoryPath, navigate } from '../router';
import { CopyButton, curlCommand, RequestSnippets } from '../snippets';
import { namesOf } from './memory-filters';

type Mode = (typeof SEARCH_MODES)[number];
type Outcome = { results: SearchResult[]; rerank?: RerankReport } | { error: unknown };
/** The playground's options besides the query and its entity, as the address keeps them. */
type Extras = Pick<SearchBody, 'threshold' | 'rerank' | 'categories'> & { filters?: Record<string, unknown> };
const EXTRA_PARAMS = ['threshold', 'rerank', 'categories', 'filters'] as const;

/** The options in the address; filters must be a JSON object (the API checks what it says). */
function extrasOf(params: URLSearchParams): { extras: Extras } | { error: string } {
  const threshold = params.get('threshold');
  const filters = params.get('filters');
  const extras: Extras = {
    ...(threshold ? { threshold: Number(threshold) } : {}),
    ...(params.get('rerank') === 'true' ? { rerank: true } : {}),
    ...(namesOf(params.get('categories') ?? '') ? { categories: namesOf(params.get('categories') ?? '') } : {}),
  };
  if (!filters) return { extras };
  try {
    const parsed: unknown = JSON.parse(filters);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'Filters must be a JSON object, such as {"schema": "lead-profile"}.' };
    return { extras: { ...extras, filters: parsed as Record<string, unknown> } };
  } catch (error) {
    return { error: `Filters are not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The search playground: one query in hybrid, dense and keyword side by side, each as curl too. */
export function SearchPage({ params }: { params: URLSearchParams }) {
  const type = (ENTITY_TYPES as readonly string[]).includes(params.get('type') ?? '') ? (params.get('type') as EntityType) : 'user';
  const id = params.get('id') ?? '';
  const query = params.get('q') ?? '';
  const extraParams = EXTRA_PARAMS.map((k) => params.get(k) ?? '');
  const [threshold = '', rerank = '', categories = '', filters = ''] = extraParams;
  const parsed = extrasOf(params);
  const extras = 'extras' in parsed ? parsed.extras : null;
  const [form, setForm] = useState({ type, id, query, threshold, rerank, categories, filters });
  const [outcomes, setOutcomes] = useState<Partial<Record<Mode, Outcome>> | null>(null);
  const [shownMode, setShownMode] = useState<Mode>('hybrid');

  useEffect(() => setForm({ type, id, query, threshold, rerank, categories, filters }), [type, id, query, ...extraParams]);
  useEffect(() => {
    if (id === '' || query === '' || extras === null) {
      setOutcomes(null);
      return;
    }
    let live = true;
    setOutcomes({});
    for (const mode of SEARCH_MODES) {
      unwrap(api.POST('/v3/memories/search', { body: searchBody(type, id, query, mode, extras) }))
        .then((answer): Outcome => ({ results: answer.results ?? [], rerank: answer.rerank }))
        .catch((error: unknown): Outcome => ({ error }))
        .then((outcome) => live && setOutcomes((all) => ({ ...all, [mode]: outcome })));
    }
    return () => {
      live = false;
    };
  }, [type, id, query, ...extraParams]);

  return (
    <>
      <PageTitle>Search playground</PageTitle>
      <p class="muted">One query run in each search mode, side by side, with each result's score, and the request as code.</p>
      <form
        class="card search-form"
        onSubmit={(event) => {
          event.preventDefault();
          const chosen = Object.entries({ threshold: form.threshold, rerank: form.rerank, categories: form.categories.trim(), filters: form.filters.trim() }).filter(([, v]) => v !== '');
          navigate(`${BASE}/search?${new URLSearchParams([['type', form.type], ['id', form.id.trim()], ['q', form.query], ...chosen] as string[][]).toString()}`);
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
        <div class="fields">
          <div>
            <label for="search-threshold">Threshold (least cosine, −1 to 1)</label>
            <input id="search-threshold" type="number" min={-1} max={1} step={0.05} value={form.threshold} onInput={(e) => setForm({ ...form, threshold: e.currentTarget.value })} />
          </div>
          <div class="check">
            <input id="search-rerank" type="checkbox" checked={form.rerank === 'true'} onChange={(e) => setForm({ ...form, rerank: e.currentTarget.checked ? 'true' : '' })} />
            <label for="search-rerank">Rerank</label>
          </div>
          <div class="grow">
            <label for="search-categories">Categories (any of, comma-separated)</label>
            <input id="search-categories" value={form.categories} onInput={(e) => setForm({ ...form, categories: e.currentTarget.value })} />
          </div>
        </div>
        <label for="search-filters">More filters (JSON, joined to the entity with AND)</label>
        <textarea id="search-filters" rows={2} spellcheck={false} value={form.filters} onInput={(e) => setForm({ ...form, filters: e.currentTarget.value })} />
      </form>
      {'error' in parsed ? <ErrorNote error={parsed.error} /> : null}
      {outcomes !== null && extras !== null ? (
        <>
          <div class="modes">
            {SEARCH_MODES.map((mode) => (
              <ModeResults key={mode} mode={mode} outcome={outcomes[mode]} body={searchBody(type, id, query, mode, extras)} />
            ))}
          </div>
          <section class="card" aria-labelledby="code-title">
            <h2 id="code-title">Request as code</h2>
            <div class="fields">
              <div>
                <label for="code-mode">Mode</label>
                <select id="code-mode" value={shownMode} onChange={(e) => setShownMode(e.currentTarget.value as Mode)}>
                  {SEARCH_MODES.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </div>
            </div>
            <p class="muted">The API key is read from the environment variable CAIRN_API_KEY; it is never shown here.</p>
            <RequestSnippets body={searchBody(type, id, query, shownMode, extras)} />
          </section>
        </>
      ) : null}
    </>
  );
}

function searchBody(type: EntityType, id: string, query: string, mode: Mode, extras: Extras): SearchBody {
  const { filters, ...options } = extras;
  return { query, filters: filters ? { AND: [entityFilter(type, id), filters] } : entityFilter(type, id), mode, top_k: 10, ...options };
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
      {outcome !== undefined && 'rerank' in outcome && outcome.rerank ? <RerankNote report={outcome.rerank} /> : null}
      <Curl body={body} />
    </section>
  );
}

/** Whether the server's reranker ordered the results, and why not when it did not. */
function RerankNote({ report }: { report: RerankReport }) {
  return (
    <p class="muted rerank">
      {report.applied ? `Reranked by ${report.model ?? 'the server'}.` : `Not reranked: ${report.reason ?? (report.model === null ? 'the server has no reranker' : 'the search kept its own order')}.`}
    </p>
  );
}

/** The same request as a shell command, the key left in an environment variable. */
function Curl({ body }: { body: SearchBody }) {
  const command = curlCommand(body, location.origin);
  return (
    <details class="curl">
      <summary>Request as curl</summary>
      <pre>{command}</pre>
      <CopyButton code={command} />
    </details>
  );
}
