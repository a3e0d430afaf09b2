import { useState } from 'preact/hooks';
import { api, unwrap, type IndexMatch, type IndexQuery, type VectorIndex } from '../api';
import { ErrorNote, Loading, PageTitle, Time, useLoaded, useSubmit } from '../components';
import { BASE, Link } from '../router';

export const indexPath = (name: string) => `${BASE}/indexes/${encodeURIComponent(name)}`;

/** The project's vector indexes. */
export function IndexesPage() {
  const list = useLoaded(async () => (await unwrap(api.GET('/v1/indexes', { params: { query: { limit: 100 } } }))).indexes ?? [], () => false, []);
  return (
    <>
      <PageTitle>Vector indexes</PageTitle>
      <ErrorNote error={list.error} />
      {list.value === null && list.error === null ? <Loading /> : null}
      {list.value !== null && list.value.length === 0 ? (
        <p>
          No indexes yet: create one with <code>POST /v1/indexes</code>.
        </p>
      ) : null}
      {list.value !== null && list.value.length > 0 ? (
        <table>
          <caption class="visually-hidden">Vector indexes</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col" class="number">
                Dimension
              </th>
              <th scope="col">Metric</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.value.map((ix) => (
              <tr key={ix.name}>
                <td>
                  <Link href={indexPath(ix.name ?? '')}>{ix.name}</Link>
                </td>
                <td>{kind(ix)}</td>
                <td class="number">{ix.dimension}</td>
                <td>{ix.metric}</td>
                <td>
                  <Time value={ix.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

const kind = (ix: VectorIndex) => (ix.managed ? `managed (${ix.embed_model ?? ''})` : 'raw vectors');

/** One index: what it is, how many vectors it holds, and a query playground. */
export function IndexPage({ name }: { name: string }) {
  const loaded = useLoaded(
    async () => {
      const path = { path: { name } };
      const [index, stats] = await Promise.all([unwrap(api.GET('/v1/indexes/{name}', { params: path })), unwrap(api.GET('/v1/indexes/{name}/stats', { params: path }))]);
      return { index, stats };
    },
    () => false,
    [name],
  );
  const ix = loaded.value?.index;
  return (
    <>
      <PageTitle>Index {name}</PageTitle>
      <p>
        <Link href={`${BASE}/indexes`}>All indexes</Link>
      </p>
      <ErrorNote error={loaded.error} />
      {loaded.value === null && loaded.error === null ? <Loading /> : null}
      {ix && loaded.value ? (
        <>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{kind(ix)}</dd>
            <dt>Dimension</dt>
            <dd>{ix.dimension}</dd>
            <dt>Metric</dt>
            <dd>{ix.metric}</dd>
            <dt>Vectors</dt>
            <dd>{loaded.value.stats.vector_count}</dd>
            <dt>Deletion protection</dt>
            <dd>{ix.deletion_protection}</dd>
            <dt>Tags</dt>
            <dd>{Object.keys(ix.tags ?? {}).length > 0 ? <code>{JSON.stringify(ix.tags)}</code> : '—'}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={ix.created_at} />
            </dd>
          </dl>
          <QueryPlayground index={ix} />
        </>
      ) : null}
    </>
  );
}

/** Queries the index by text (managed indexes) or by a vector given as a JSON array. */
function QueryPlayground({ index }: { index: VectorIndex }) {
  const [by, setBy] = useState<'text' | 'vector'>(index.managed ? 'text' : 'vector');
  const [input, setInput] = useState('');
  const [topK, setTopK] = useState(5);
  const [matches, setMatches] = useState<IndexMatch[] | null>(null);
  const { busy, error, submit } = useSubmit(async () => {
    const body: IndexQuery = { top_k: topK, include_metadata: true };
    if (by === 'text') body.text = input;
    else {
      let vector: unknown;
      try {
        vector = JSON.parse(input);
      } catch {
        throw new Error('The vector is not JSON: write it as an array of numbers, e.g. [0.1, 0.2, 0.3].');
      }
      if (!Array.isArray(vector) || !vector.every((v) => typeof v === 'number')) throw new Error('The vector must be an array of numbers.');
      body.vector = vector as number[];
    }
    const answer = await unwrap(api.POST('/v1/indexes/{name}/query', { params: { path: { name: index.name ?? '' } }, body }));
    setMatches(answer.matches ?? []);
  });
  return (
    <section aria-labelledby="query-title">
      <h2 id="query-title">Query</h2>
      <form class="card" onSubmit={submit}>
        {index.managed ? (
          <fieldset class="choice">
            <legend>Query by</legend>
            <label>
              <input type="radio" name="by" checked={by === 'text'} onChange={() => setBy('text')} /> Text
            </label>
            <label>
              <input type="radio" name="by" checked={by === 'vector'} onChange={() => setBy('vector')} /> Vector
            </label>
          </fieldset>
        ) : null}
        <label for="query-input">{by === 'text' ? 'Text' : `Vector (a JSON array of ${index.dimension ?? ''} numbers)`}</label>
        <textarea id="query-input" required rows={3} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        <div class="fields">
          <div>
            <label for="query-top-k">Top k</label>
            <input id="query-top-k" type="number" min={1} max={100} value={topK} onInput={(e) => setTopK(Number(e.currentTarget.value) || 1)} />
          </div>
          <button type="submit" disabled={busy}>
            Query
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      {matches !== null && matches.length === 0 ? <p>No matches.</p> : null}
      {matches !== null && matches.length > 0 ? (
        <table>
          <caption class="visually-hidden">Matches</caption>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col" class="number">
                Score
              </th>
              <th scope="col">Metadata</th>
            </tr>
          </thead>
          <tbody>
            {matches.map((m) => (
              <tr key={m.id}>
                <td>
                  <code>{m.id}</code>
                </td>
                <td class="number score">{m.score?.toFixed(4)}</td>
                <td class="memory-text">
                  <code>{JSON.stringify(m.metadata ?? {})}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
