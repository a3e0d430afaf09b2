import { useState } from 'preact/hooks';
import { api, entityFilter, unwrap, type EntityType } from '../api';
import { ErrorNote, Loading, PageTitle, Status, Time, useLoaded, useSubmit } from '../components';
import { Link, memoryPath, searchPath } from '../router';
import { MemoryFiltersForm, type MemoryFilters } from './memory-filters';

const PAGE_SIZE = 20;

/** One entity's memories, newest first and paged, with each one's indexing status; and a form to add one. */
export function EntityPage({ type, id }: { type: EntityType; id: string }) {
  const [page, setPage] = useState(1);
  const [filters, setFilters] = useState<MemoryFilters>({});
  const { value: list, error, reload } = useLoaded(
    () =>
      unwrap(api.POST('/v3/memories', { params: { query: { page, page_size: PAGE_SIZE } }, body: { filters: entityFilter(type, id), ...filters } })).then((answer) => ({
        count: answer.count ?? 0,
        results: answer.results ?? [],
      })),
    (loaded) => loaded.results.some((m) => m.embedding_status === 'pending'),
    [type, id, page, filters],
  );

  const pages = list ? Math.max(1, Math.ceil(list.count / PAGE_SIZE)) : 1;
  return (
    <>
      <PageTitle>
        <span class="muted">{type}</span> {id}
      </PageTitle>
      <p>
        <Link href={searchPath(type, id)}>Search this {type}'s memories</Link>
      </p>
      <Indexing type={type} id={id} written={list?.count ?? 0} />
      <AddMemory type={type} id={id} onAdded={() => (page === 1 ? reload() : setPage(1))} />
      <MemoryFiltersForm
        onApply={(chosen) => {
          setFilters(chosen);
          setPage(1);
        }}
      />
      <Mentions type={type} id={id} indexed={list ? list.results.filter((m) => m.embedding_status === 'indexed').length : 0} />
      <h2>Memories {list ? <span class="muted">({list.count})</span> : null}</h2>
      <ErrorNote error={error} />
      {list === null && error === null ? <Loading /> : null}
      {list !== null && list.results.length === 0 ? <p>No memories.</p> : null}
      {list !== null && list.results.length > 0 ? (
        <table>
          <caption class="visually-hidden">Memories of {type} {id}, page {page} of {pages}</caption>
          <thead>
            <tr>
              <th scope="col">Memory</th>
              <th scope="col">Status</th>
              <th scope="col">Event time</th>
              <th scope="col">Written</th>
            </tr>
          </thead>
          <tbody>
            {list.results.map((m) => (
              <tr key={m.id}>
                <td class="memory-text">
                  <Link href={memoryPath(m.id ?? '')}>{m.memory}</Link>
                </td>
                <td>
                  <Status value={m.embedding_status} />
                </td>
                <td>
                  <Time value={m.created_at} />
                </td>
                <td>
                  <Time value={m.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {pages > 1 ? (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {pages}
          </span>
          <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      ) : null}
    </>
  );
}

/**
 * How many of this owner's memories are still being indexed or failed it (every row, the versions
 * updates superseded included), read again every second while any is pending: when an import is searchable.
 */
function Indexing({ type, id, written }: { type: EntityType; id: string; written: number }) {
  const { value: counts, error } = useLoaded(
    () => unwrap(api.GET('/v3/memories/status', { params: { query: entityFilter(type, id) } })),
    (loaded) => loaded.pending > 0,
    // read again when the list changes (a memory added here)
    [type, id, written],
  );
  if (error !== null) return <ErrorNote error={error} />;
  if (counts === null || counts.total === 0) return null;
  const open = [counts.pending > 0 ? `${counts.pending} pending` : null, counts.failed > 0 ? `${counts.failed} failed` : null].filter((part) => part !== null);
  return (
    <p class={open.length > 0 ? undefined : 'muted'} role="status">
      {open.length > 0 ? `Indexing: ${open.join(', ')} of ${counts.total}` : `All ${counts.total} indexed: searchable`}
    </p>
  );
}

/** The people, places, organisations, products and dates this owner's memories mention (20 most mentioned): found when each memory is indexed. */
function Mentions({ type, id, indexed }: { type: EntityType; id: string; indexed: number }) {
  const { value: found, error } = useLoaded(
    () => unwrap(api.POST('/v3/memories/entities', { body: { filters: entityFilter(type, id), limit: 20 } })).then((answer) => answer.results ?? []),
    () => false,
    // read again as memories get indexed: that is when their entities are found
    [type, id, indexed],
  );
  return (
    <>
      <h2>Mentioned</h2>
      <ErrorNote error={error} />
      {found === null && error === null ? <Loading /> : null}
      {found !== null && found.length === 0 ? <p class="muted">No names or dates found in the memories yet.</p> : null}
      {found !== null && found.length > 0 ? (
        <table>
          <caption class="visually-hidden">Named entities the memories of {type} {id} mention</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Memories</th>
              <th scope="col">First</th>
              <th scope="col">Last</th>
            </tr>
          </thead>
          <tbody>
            {found.map((e) => (
              <tr key={`${e.kind}:${e.key}`}>
                <td>{e.name}</td>
                <td>{e.kind}</td>
                <td>{e.count}</td>
                <td>
                  <Time value={e.first_seen} />
                </td>
                <td>
                  <Time value={e.last_seen} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

/** Stores a memory as written (infer: false): one ADD, indexed in the background. */
function AddMemory({ type, id, onAdded }: { type: EntityType; id: string; onAdded: () => void }) {
  const [text, setText] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    await unwrap(api.POST('/v3/memories/add', { body: { messages: [{ role: 'user', content: text }], ...entityFilter(type, id), infer: false } }));
    setText('');
    onAdded();
  });
  return (
    <form class="card" onSubmit={submit}>
      <label for="new-memory">New memory</label>
      <textarea id="new-memory" required rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Add memory
      </button>
    </form>
  );
}
