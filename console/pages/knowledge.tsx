import { useEffect, useRef, useState } from 'preact/hooks';
import { api, unwrap, type Chunk, type KnowledgeBase, type KnowledgeDocument, type KnowledgeHit, type paths } from '../api';
import { ConfirmAction, ErrorNote, Loading, PageTitle, Status, Time, useLoaded, useSubmit } from '../components';
import { BASE, Link, navigate } from '../router';

// Knowledge bases: the list, one base with its documents (uploaded by drop or file input, each
// followed until ready or failed) and a search playground, and one document with its chunks.

export const knowledgePath = (kb?: string) => (kb ? `${BASE}/knowledge/${encodeURIComponent(kb)}` : `${BASE}/knowledge`);
/** A document's page; with a chunk id, the page shows that chunk (what a citation opens). */
export const documentPath = (kb: string, id: string, chunk?: string) =>
  `${knowledgePath(kb)}/documents/${encodeURIComponent(id)}${chunk ? `?${new URLSearchParams({ chunk }).toString()}` : ''}`;

type UploadBody = NonNullable<paths['/v1/knowledge/{name}/documents']['post']['requestBody']>['content']['multipart/form-data'];
type SearchMode = NonNullable<NonNullable<paths['/v1/knowledge/{name}/search']['post']['requestBody']>['content']['application/json']['mode']>;
const MODES = ['hybrid', 'dense', 'keyword'] as const satisfies readonly SearchMode[];
/** A document the worker has not finished with yet. */
const settling = (d: KnowledgeDocument) => d.status === 'uploaded' || d.status === 'processing';
/** The most documents and chunks a page shows. */
const PAGE = 100;

export function KnowledgeBasesPage() {
  const { value: bases, error, reload } = useLoaded(async () => (await unwrap(api.GET('/v1/knowledge', { params: { query: { limit: PAGE } } }))).knowledge_bases ?? [], () => false, []);
  return (
    <>
      <PageTitle>Knowledge bases</PageTitle>
      <p class="muted">Documents agents answer from, cut into chunks and searched by meaning and by keyword.</p>
      <ErrorNote error={error} />
      {bases === null && error === null ? <Loading /> : null}
      {bases !== null && bases.length === 0 ? <p>No knowledge bases yet: create one below.</p> : null}
      {bases !== null && bases.length > 0 ? (
        <table>
          <caption class="visually-hidden">Knowledge bases</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="number">
                Documents
              </th>
              <th scope="col">Embedding model</th>
              <th scope="col">Chunking</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {bases.map((b) => (
              <tr key={b.id}>
                <td>
                  <Link href={knowledgePath(b.name)}>{b.name}</Link>
                </td>
                <td class="number">{b.document_count}</td>
                <td>{b.embed_model}</td>
                <td>
                  {b.chunk_size} characters, {b.chunk_overlap} overlap
                </td>
                <td>
                  <Time value={b.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <CreateBase onCreated={reload} />
    </>
  );
}

function CreateBase({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const created = await unwrap(api.POST('/v1/knowledge', { body: { name: name.trim() } }));
    onCreated();
    navigate(knowledgePath(created.name));
  });
  return (
    <form class="card" aria-labelledby="create-base" onSubmit={submit}>
      <h2 id="create-base">Create a knowledge base</h2>
      <div class="fields">
        <div class="grow">
          <label for="base-name">Name</label>
          <input id="base-name" required pattern="[a-zA-Z0-9][a-zA-Z0-9_\-]{0,63}" aria-describedby="base-name-hint" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy}>
          Create
        </button>
      </div>
      <p class="hint" id="base-name-hint">
        Letters, digits, - and _; agents refer to the base by it.
      </p>
      <ErrorNote error={error} />
    </form>
  );
}

/** One base: its documents, followed until each is ready or failed; uploading; searching it. */
export function KnowledgeBasePage({ name }: { name: string }) {
  const { value, error, reload } = useLoaded(
    () =>
      Promise.all([
        unwrap(api.GET('/v1/knowledge/{name}', { params: { path: { name } } })),
        unwrap(api.GET('/v1/knowledge/{name}/documents', { params: { path: { name }, query: { limit: PAGE } } })).then((a) => a.documents ?? []),
      ]),
    ([, documents]) => documents.some(settling),
    [name],
  );
  const [base, documents] = value ?? [null, null];
  return (
    <>
      <PageTitle>Knowledge base {name}</PageTitle>
      <p>
        <Link href={knowledgePath()}>All knowledge bases</Link>
      </p>
      <ErrorNote error={error} />
      {base === null ? (
        error === null ? (
          <Loading />
        ) : null
      ) : (
        <>
          <BaseFacts base={base} />
          <h2>Documents</h2>
          <Upload kb={name} onUploaded={reload} />
          <Documents kb={name} documents={documents ?? []} onDeleted={reload} />
          <SearchPlayground kb={name} />
        </>
      )}
    </>
  );
}

function BaseFacts({ base }: { base: KnowledgeBase }) {
  return (
    <dl class="facts">
      <dt>Documents</dt>
      <dd>{base.document_count}</dd>
      <dt>Language model</dt>
      <dd>{base.model}</dd>
      <dt>Embedding model</dt>
      <dd>{base.embed_model}</dd>
      <dt>Chunking</dt>
      <dd>
        {base.chunk_size} characters, {base.chunk_overlap} overlap
      </dd>
      <dt>Instructions</dt>
      <dd>{base.instructions ? base.instructions : <span class="muted">none</span>}</dd>
    </dl>
  );
}

/** A drop area that is also a labelled file input: each file is uploaded as multipart/form-data. */
function Upload({ kb, onUploaded }: { kb: string; onUploaded: () => void }) {
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string[]>([]);

  async function send(files: File[]) {
    if (files.length === 0 || busy) return;
    setBusy(true);
    setError(null);
    const done: string[] = [];
    try {
      for (const file of files) {
        const form = new FormData();
        form.append('file', file, file.name);
        // FormData is sent as it is: the browser writes its multipart boundary
        await unwrap(api.POST('/v1/knowledge/{name}/documents', { params: { path: { name: kb } }, body: form as unknown as UploadBody, bodySerializer: (body) => body as unknown as FormData }));
        done.push(file.name);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      setSent(done);
      onUploaded();
    }
  }

  return (
    <div
      class={`dropzone card${over ? ' over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        void send([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      <label for="document-files">Upload documents</label>
      <p class="hint" id="document-files-hint">
        Drop files here, or choose them: txt, md, html, pdf or docx, up to 10 MB each.
      </p>
      <input
        id="document-files"
        type="file"
        multiple
        accept=".txt,.md,.markdown,.html,.htm,.pdf,.docx"
        aria-describedby="document-files-hint"
        disabled={busy}
        onChange={(e) => {
          const input = e.currentTarget;
          const files = [...(input.files ?? [])];
          input.value = '';
          void send(files);
        }}
      />
      <ErrorNote error={error} />
      <p role="status" class="muted">
        {busy ? 'Uploading…' : sent.length > 0 ? `Uploaded ${sent.join(', ')}.` : ''}
      </p>
    </div>
  );
}

function Documents({ kb, documents, onDeleted }: { kb: string; documents: KnowledgeDocument[]; onDeleted: () => void }) {
  if (documents.length === 0) return <p>No documents yet.</p>;
  return (
    <table>
      <caption class="visually-hidden">Documents, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Document</th>
          <th scope="col">Status</th>
          <th scope="col" class="number">
            Chunks
          </th>
          <th scope="col">Type</th>
          <th scope="col" class="number">
            Bytes
          </th>
          <th scope="col">Added</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {documents.map((d) => (
          <tr key={d.id}>
            <td>
              <Link href={documentPath(kb, d.id ?? '')}>{d.filename}</Link>
            </td>
            <td>
              <Status value={d.status} />
              {d.error ? <p class="error">{d.error}</p> : null}
            </td>
            <td class="number">{d.chunk_count}</td>
            <td>{d.source_type}</td>
            <td class="number">{d.size}</td>
            <td>
              <Time value={d.created_at} />
            </td>
            <td>
              <DeleteDocument kb={kb} document={d} onDeleted={onDeleted} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Deleting asks once more, with a second button, before it deletes. */
function DeleteDocument({ kb, document, onDeleted }: { kb: string; document: KnowledgeDocument; onDeleted: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const remove = () =>
    unwrap(api.DELETE('/v1/knowledge/{name}/documents/{docId}', { params: { path: { name: kb, docId: document.id ?? '' } } })).then(onDeleted, setError);
  return (
    <>
      <ErrorNote error={error} />
      <ConfirmAction action="Delete" name={`Delete ${document.filename ?? ''}`} group={`Confirm deleting ${document.filename ?? ''}`} confirm="Delete for good" onConfirm={remove} />
    </>
  );
}

type Outcome = { hits: KnowledgeHit[] } | { error: unknown };

/** One query in each search mode side by side; each hybrid hit shows which signal found it. */
function SearchPlayground({ kb }: { kb: string }) {
  const [query, setQuery] = useState('');
  const [outcomes, setOutcomes] = useState<Partial<Record<SearchMode, Outcome>> | null>(null);
  const asked = useRef(0);
  function search(event: Event) {
    event.preventDefault();
    const ask = (asked.current += 1);
    setOutcomes({});
    for (const mode of MODES) {
      unwrap(api.POST('/v1/knowledge/{name}/search', { params: { path: { name: kb } }, body: { query, mode, top_k: 5 } }))
        .then((answer): Outcome => ({ hits: answer.results ?? [] }))
        .catch((error: unknown): Outcome => ({ error }))
        .then((outcome) => ask === asked.current && setOutcomes((all) => ({ ...all, [mode]: outcome })));
    }
  }
  // the server says which signals' candidates held each hit
  const foundBy = (hit: KnowledgeHit): string => (hit.found_by ?? []).join(' and ') || 'neither';
  return (
    <section aria-labelledby="kb-search">
      <h2 id="kb-search">Search playground</h2>
      <p class="muted">
        The query runs hybrid (dense and keyword fused by rank), dense alone and keyword alone; each hybrid hit says which of the two signals found it.
      </p>
      <form class="card" onSubmit={search}>
        <div class="fields">
          <div class="grow">
            <label for="kb-query">Query</label>
            <input id="kb-query" type="search" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          </div>
          <button type="submit">Search</button>
        </div>
      </form>
      {outcomes !== null ? (
        <div class="modes">
          {MODES.map((mode) => {
            const outcome = outcomes[mode];
            return (
              <section key={mode} class="mode card" aria-labelledby={`kb-mode-${mode}`}>
                <h3 id={`kb-mode-${mode}`}>{mode}</h3>
                {outcome === undefined ? (
                  <p class="muted" role="status">
                    Searching…
                  </p>
                ) : 'error' in outcome ? (
                  <ErrorNote error={outcome.error} />
                ) : outcome.hits.length === 0 ? (
                  <p class="muted">No results.</p>
                ) : (
                  <ol class="results">
                    {outcome.hits.map((h) => (
                      <li key={h.chunk_id}>
                        <p class="hit-text">{h.text}</p>
                        <Link href={documentPath(h.knowledge_base ?? kb, h.document_id ?? '', h.chunk_id)}>{h.filename}</Link>
                        <span class="score">
                          <span class="visually-hidden">score </span>
                          {typeof h.score === 'number' ? h.score.toFixed(4) : '—'}
                        </span>
                        {mode === 'hybrid' ? <span class="signal">found by {foundBy(h)}</span> : null}
                      </li>
                    ))}
                  </ol>
                )}
              </section>
            );
          })}
        </div>
      ) : null}
    </section>
  );
}

/** Every chunk of a document, in pages of PAGE, loaded until the last. */
async function allChunks(kb: string, id: string): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for (;;) {
    const page = (await unwrap(api.GET('/v1/knowledge/{name}/documents/{docId}/chunks', { params: { path: { name: kb, docId: id }, query: { limit: PAGE, offset: chunks.length } } }))).chunks ?? [];
    chunks.push(...page);
    if (page.length < PAGE) return chunks;
  }
}

/** One document: its status, followed until ready or failed, and its chunks; `chunk` is shown first in view. */
export function DocumentPage({ kb, id, chunk }: { kb: string; id: string; chunk: string | null }) {
  const { value, error } = useLoaded(
    () => Promise.all([unwrap(api.GET('/v1/knowledge/{name}/documents/{docId}', { params: { path: { name: kb, docId: id } } })), allChunks(kb, id)]),
    ([doc]) => settling(doc),
    [kb, id],
  );
  const [doc, chunks] = value ?? [null, null];
  const cited = useRef<HTMLLIElement>(null);
  const shown = chunks !== null && chunk !== null && chunks.some((c) => c.id === chunk);
  useEffect(() => {
    if (shown) cited.current?.scrollIntoView({ block: 'center' });
  }, [shown]);

  return (
    <>
      <PageTitle>Document {doc?.filename ?? ''}</PageTitle>
      <p>
        <Link href={knowledgePath(kb)}>Knowledge base {kb}</Link>
      </p>
      <ErrorNote error={error} />
      {doc === null || chunks === null ? (
        error === null ? (
          <Loading />
        ) : null
      ) : (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <Status value={doc.status} />
              {doc.error ? <span class="error"> {doc.error}</span> : null}
            </dd>
            <dt>Type</dt>
            <dd>{doc.source_type}</dd>
            <dt>Bytes</dt>
            <dd>{doc.size}</dd>
            <dt>Added</dt>
            <dd>
              <Time value={doc.created_at} />
            </dd>
            <dt>Metadata</dt>
            <dd>
              <pre class="json">{JSON.stringify(doc.metadata ?? {}, null, 2)}</pre>
            </dd>
          </dl>
          <h2>Chunks ({chunks.length})</h2>
          {chunk !== null && !shown ? <p class="muted">The cited chunk is no longer in this document: it was processed again or changed.</p> : null}
          {chunks.length === 0 ? (
            <p class="muted">No chunks{settling(doc) ? ' yet: the document is still being processed' : ''}.</p>
          ) : (
            <ol class="chunks">
              {chunks.map((c) => (
                <li key={c.id} id={`chunk-${c.ordinal ?? 0}`} ref={c.id === chunk ? cited : undefined} class={c.id === chunk ? 'cited' : undefined} aria-current={c.id === chunk ? 'true' : undefined}>
                  <p class="chunk-meta muted">
                    {c.id === chunk ? <strong>Cited chunk · </strong> : null}
                    {c.heading ? `${c.heading} · ` : ''}characters {c.start}–{c.end}
                  </p>
                  <p class="chunk-text">{c.text}</p>
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </>
  );
}
