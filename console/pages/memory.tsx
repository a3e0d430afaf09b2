import { useState } from 'preact/hooks';
import { api, ENTITY_TYPES, unwrap, type Memory } from '../api';
import { ConfirmAction, ErrorNote, Loading, PageTitle, Status, Time, useLoaded, useSubmit } from '../components';
import { entityPath, Link, memoryPath, navigate } from '../router';

/** One memory: its text, metadata, categories and status, every change to it, and editing and deleting it. */
export function MemoryPage({ id }: { id: string }) {
  const { value, error, reload } = useLoaded(
    () =>
      Promise.all([
        unwrap(api.GET('/v1/memories/{id}', { params: { path: { id } } })),
        unwrap(api.GET('/v1/memories/{id}/history', { params: { path: { id } } })),
        unwrap(api.GET('/v1/memories/{id}/versions', { params: { path: { id } } })),
      ]),
    ([found]) => found.embedding_status === 'pending',
    [id],
  );
  const [memory, history, versions] = value ?? [null, null, null];

  if (memory === null) {
    return (
      <>
        <PageTitle>Memory</PageTitle>
        <ErrorNote error={error} />
        {error === null ? <Loading /> : null}
      </>
    );
  }
  const owners = ENTITY_TYPES.map((t) => [t, memory[`${t}_id`]] as const).filter((o): o is readonly [(typeof ENTITY_TYPES)[number], string] => typeof o[1] === 'string');
  const firstOwner = owners[0];
  return (
    <>
      <PageTitle>Memory</PageTitle>
      <ErrorNote error={error} />
      <blockquote class="memory-quote">{memory.memory}</blockquote>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Status value={memory.embedding_status} />
          {memory.embedding_error ? <span class="muted"> {memory.embedding_error}</span> : null}
        </dd>
        <dt>Belongs to</dt>
        <dd>
          {owners.map(([type, name], i) => (
            <span key={type}>
              {i > 0 ? ', ' : ''}
              {type} <Link href={entityPath(type, name)}>{name}</Link>
            </span>
          ))}
        </dd>
        <dt>Categories</dt>
        <dd>{memory.categories && memory.categories.length > 0 ? memory.categories.join(', ') : <span class="muted">none</span>}</dd>
        <dt>Event time</dt>
        <dd>
          <Time value={memory.created_at} />
        </dd>
        <dt>Valid</dt>
        <dd>
          from <Time value={memory.valid_from} /> {memory.valid_to ? (
            <>
              to <Time value={memory.valid_to} />
            </>
          ) : (
            'until now'
          )}
          {memory.superseded_by ? (
            <>
              {' '}
              · superseded by <Link href={memoryPath(memory.superseded_by)}>the current text</Link>
            </>
          ) : null}
        </dd>
        <dt>Written</dt>
        <dd>
          <Time value={memory.updated_at} />
        </dd>
        <dt>Expires</dt>
        <dd>{memory.expiration_date ?? <span class="muted">never</span>}</dd>
        <dt>Metadata</dt>
        <dd>
          <pre class="json">{JSON.stringify(memory.metadata ?? {}, null, 2)}</pre>
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{memory.id}</code>
        </dd>
      </dl>
      {memory.superseded_by ? null : <EditMemory key={memory.updated_at} memory={memory} onSaved={reload} />}
      <DeleteMemory id={id} onDeleted={() => navigate(firstOwner ? entityPath(firstOwner[0], firstOwner[1]) : '/console')} />
      {versions !== null && versions.length > 1 ? (
        <>
          <h2>Versions</h2>
          <table>
            <caption class="visually-hidden">What this memory said and when it held, the current text first</caption>
            <thead>
              <tr>
                <th scope="col">Text</th>
                <th scope="col">Valid from</th>
                <th scope="col">Valid to</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.id}>
                  <td class="memory-text">{v.id === memory.id ? v.memory : <Link href={memoryPath(v.id ?? '')}>{v.memory}</Link>}</td>
                  <td>
                    <Time value={v.valid_from} />
                  </td>
                  <td>{v.valid_to ? <Time value={v.valid_to} /> : <span class="muted">now</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <h2>History</h2>
      {history === null || history.length === 0 ? (
        <p class="muted">No changes recorded.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Changes to this memory, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {history.map((h) => (
              <tr key={h.id}>
                <td>{h.event}</td>
                <td class="memory-text">{h.old_memory ?? <span class="muted">—</span>}</td>
                <td class="memory-text">{h.new_memory ?? <span class="muted">—</span>}</td>
                <td>
                  <Time value={h.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function EditMemory({ memory, onSaved }: { memory: Memory; onSaved: () => void }) {
  const [text, setText] = useState(memory.memory ?? '');
  const { busy, error, submit } = useSubmit(async () => {
    await unwrap(api.PUT('/v1/memories/{id}', { params: { path: { id: memory.id ?? '' } }, body: { text } }));
    onSaved();
  });
  return (
    <form class="card" onSubmit={submit}>
      <label for="memory-text">Text</label>
      <textarea id="memory-text" required rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <ErrorNote error={error} />
      <button type="submit" disabled={busy || text === memory.memory}>
        Save
      </button>
    </form>
  );
}

/** Deleting asks once more, with a second button, before it deletes. */
function DeleteMemory({ id, onDeleted }: { id: string; onDeleted: () => void }) {
  const [error, setError] = useState<unknown>(null);
  async function remove() {
    try {
      await unwrap(api.DELETE('/v1/memories/{id}', { params: { path: { id } } }));
      onDeleted();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <div class="danger">
      <ErrorNote error={error} />
      <ConfirmAction action="Delete memory" group="Confirm deletion" question="Delete this memory for good?" confirm="Delete for good" onConfirm={() => void remove()} />
    </div>
  );
}
