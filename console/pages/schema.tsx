import { useState } from 'preact/hooks';
import { api, entityFilter, ENTITY_TYPES, unwrap, type EntityType, type Extracted, type SchemaVersion } from '../api';
import { EntityTypeField, ErrorNote, Loading, PageTitle, Status, Time, useLoaded, useSubmit } from '../components';
import { Link } from '../router';
import { diffSchemas, typeOf } from '../schema-diff';
import { Head, pageOf, Pager, recordPath, VersionCells } from './schemas';

const MAX_VERSIONS = 100;

/** One record schema: its versions and the difference between two of them, its records, and an extraction playground. */
export function SchemaPage({ name }: { name: string }) {
  const { value: versions, error } = useLoaded(
    () => unwrap(api.GET('/v1/schemas/{name}/versions', { params: { path: { name }, query: { limit: MAX_VERSIONS } } })).then((a) => a.versions ?? []),
    () => false,
    [name],
  );
  const [recordsVersion, setRecordsVersion] = useState(0);
  const latest = versions?.[0];
  return (
    <>
      <PageTitle>
        <span class="muted">schema</span> {name}
      </PageTitle>
      <ErrorNote error={error} />
      {versions === null && error === null ? <Loading /> : null}
      {latest ? (
        <>
          {latest.description ? <p>{latest.description}</p> : null}
          <h2>Fields of version {latest.version}</h2>
          <Fields version={latest} />
          <h2>Versions</h2>
          <Versions versions={versions ?? []} />
          {(versions ?? []).length > 1 ? <VersionDiff versions={versions ?? []} /> : <p class="muted">One version: nothing to compare yet.</p>}
          <Extraction schema={name} onStored={() => setRecordsVersion((v) => v + 1)} />
          <Records key={recordsVersion} schema={name} />
        </>
      ) : null}
    </>
  );
}

function Fields({ version }: { version: SchemaVersion }) {
  const properties = version.json_schema?.properties ?? {};
  const required = new Set(version.json_schema?.required ?? []);
  return (
    <table>
      <caption class="visually-hidden">Fields of version {version.version}</caption>
      <Head columns={['Field', 'Type', 'Required', 'Description']} />
      <tbody>
        {Object.entries(properties).map(([field, definition]) => (
          <tr key={field}>
            <td>
              <code>{field}</code>
            </td>
            <td>{typeOf(definition)}</td>
            <td>{required.has(field) ? 'yes' : 'no'}</td>
            <td>{definition.description ?? <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Versions({ versions }: { versions: SchemaVersion[] }) {
  return (
    <table>
      <caption class="visually-hidden">Versions, newest first</caption>
      <Head columns={['Version#', 'Fields#', 'Description', 'Published']} />
      <tbody>
        {versions.map((v) => (
          <tr key={v.version}>
            <VersionCells version={v} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Two chosen versions' JSON Schemas compared field by field, in the browser. */
function VersionDiff({ versions }: { versions: SchemaVersion[] }) {
  const numbers = versions.map((v) => v.version ?? 0);
  const [from, setFrom] = useState(numbers[1] ?? 0);
  const [to, setTo] = useState(numbers[0] ?? 0);
  const before = versions.find((v) => v.version === from)?.json_schema ?? {};
  const after = versions.find((v) => v.version === to)?.json_schema ?? {};
  const diffs = diffSchemas(before, after);
  const choice = (id: string, label: string, value: number, onChange: (n: number) => void) => (
    <div>
      <label for={id}>{label}</label>
      <select id={id} value={String(value)} onChange={(e) => onChange(Number(e.currentTarget.value))}>
        {numbers.map((n) => (
          <option key={n} value={String(n)}>
            version {n}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section class="card" aria-labelledby="diff-title">
      <h2 id="diff-title">Compare versions</h2>
      <div class="fields">
        {choice('diff-from', 'From', from, setFrom)}
        {choice('diff-to', 'To', to, setTo)}
      </div>
      <div role="status">
        {diffs.length === 0 ? (
          <p class="muted">No difference between version {from} and version {to}.</p>
        ) : (
          <table class="diff">
            <caption>
              From version {from} to version {to}
            </caption>
            <Head columns={['Field', 'Change', 'What', 'Before', 'After']} />
            <tbody>
              {diffs.flatMap((d) =>
                d.aspects.map((a, i) => (
                  <tr key={`${d.field}:${a.aspect}`} class={`diff-${d.kind}`}>
                    <td>{i === 0 ? <code>{d.field}</code> : <span class="visually-hidden">{d.field}</span>}</td>
                    <td>{i === 0 ? d.kind : null}</td>
                    <td>{a.aspect}</td>
                    <td>{a.before}</td>
                    <td>{a.after}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}

/** The schema's records, newest first, paged. */
function Records({ schema }: { schema: string }) {
  const [page, setPage] = useState(1);
  const { value, error } = useLoaded(
    () => pageOf(page, (limit, offset) => unwrap(api.GET('/v1/records/{schema}', { params: { path: { schema }, query: { limit, offset } } })).then((a) => a.records ?? [])),
    (loaded) => loaded.items.some((r) => r.embedding_status === 'pending'),
    [schema, page],
  );
  return (
    <>
      <h2>Records</h2>
      <ErrorNote error={error} />
      {value === null && error === null ? <Loading /> : null}
      {value !== null && value.items.length === 0 && page === 1 ? <p>No records.</p> : null}
      {value !== null && value.items.length > 0 ? (
        <table>
          <caption class="visually-hidden">Records, page {page}</caption>
          <Head columns={['Record', 'Belongs to', 'Version#', 'Status', 'Written']} />
          <tbody>
            {value.items.map((r) => (
              <tr key={r.id}>
                <td class="memory-text">
                  <Link href={recordPath(schema, r.id ?? '')}>{summary(r.record)}</Link>
                </td>
                <td>{owners(r)}</td>
                <td class="number">{r.schema_version}</td>
                <td>
                  <Status value={r.embedding_status} />
                </td>
                <td>
                  <Time value={r.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {value !== null ? <Pager page={page} more={value.more} onPage={setPage} /> : null}
    </>
  );
}

/** A record's values in one line: "name: Jane Doe, email: jane@acme.com". */
export function summary(values: Record<string, unknown> | undefined): string {
  const text = Object.entries(values ?? {})
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ');
  return text === '' ? '(no values)' : text;
}

/** Whom a record belongs to: "user alice". */
export function owners(r: Partial<Record<`${EntityType}_id`, string | null>>): string {
  return ENTITY_TYPES.flatMap((t) => (r[`${t}_id`] ? [`${t} ${r[`${t}_id`] ?? ''}`] : [])).join(', ');
}

/** Text in, the record the API extracts out (stored when complete), with the required fields the text did not state. */
function Extraction({ schema, onStored }: { schema: string; onStored: () => void }) {
  const [text, setText] = useState('');
  const [type, setType] = useState<EntityType>('user');
  const [id, setId] = useState('');
  const [outcome, setOutcome] = useState<Extracted | null>(null);
  const { busy, error, submit } = useSubmit(async () => {
    setOutcome(null);
    const answer = await unwrap(api.POST('/v1/records/{schema}/extract', { params: { path: { schema } }, body: { text, ...entityFilter(type, id.trim()) } }));
    setOutcome(answer);
    if (answer.stored) onStored();
  });
  const missing = outcome !== null && 'missing' in outcome ? (outcome.missing ?? []) : [];
  const values = outcome === null ? null : outcome.stored ? (outcome.record?.record ?? {}) : (outcome.record ?? null);
  return (
    <section class="card" aria-labelledby="extract-title">
      <h2 id="extract-title">Extraction playground</h2>
      <p class="muted">
        The local language model reads the text for this schema's fields (only values it states). A record with every required field is stored; otherwise
        nothing is, and the page shows what was found and what is missing.
      </p>
      <form onSubmit={submit}>
        <label for="extract-text">Text</label>
        <textarea id="extract-text" required rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <div class="fields">
          <EntityTypeField id="extract-type" value={type} onChange={setType} />
          <div>
            <label for="extract-id">Entity id</label>
            <input id="extract-id" required value={id} onInput={(e) => setId(e.currentTarget.value)} />
          </div>
          <button type="submit" disabled={busy}>
            {busy ? 'Extracting…' : 'Extract'}
          </button>
        </div>
      </form>
      <ErrorNote error={error} />
      {outcome !== null ? (
        <div class="extracted" role="status">
          <h3>{outcome.stored ? 'Stored' : values === null ? 'Nothing found' : 'Not stored: fields missing'}</h3>
          {outcome.stored && outcome.record?.id ? (
            <p>
              <Link href={recordPath(schema, outcome.record.id)}>Open the stored record</Link>
            </p>
          ) : null}
          {values !== null ? <Values values={values} /> : null}
          {missing.length > 0 ? (
            <p>
              Missing: {missing.map((m, i) => (
                <span key={m}>
                  {i > 0 ? ', ' : ''}
                  <code class="missing">{m}</code>
                </span>
              ))}
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

/** A record's values, one field a row. */
export function Values({ values }: { values: Record<string, unknown> }) {
  return (
    <dl class="facts">
      {Object.entries(values).map(([field, value]) => (
        <div key={field} class="fact">
          <dt>{field}</dt>
          <dd>{Array.isArray(value) ? value.join(', ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
