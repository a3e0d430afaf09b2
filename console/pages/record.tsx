import { api, unwrap } from '../api';
import { ErrorNote, Loading, PageTitle, Status, Time, useLoaded } from '../components';
import { Link } from '../router';
import { owners, Values } from './schema';
import { schemaPath } from './schemas';

/** One typed record: its values field by field, the schema version it is pinned to, its owners and status. */
export function RecordPage({ schema, id }: { schema: string; id: string }) {
  const { value: record, error } = useLoaded(
    () => unwrap(api.GET('/v1/records/{schema}/{id}', { params: { path: { schema, id } } })),
    (loaded) => loaded.embedding_status === 'pending',
    [schema, id],
  );
  return (
    <>
      <PageTitle>
        <span class="muted">{schema} record</span>
      </PageTitle>
      <ErrorNote error={error} />
      {record === null && error === null ? <Loading /> : null}
      {record !== null ? (
        <>
          <h2>Fields</h2>
          <Values values={record.record ?? {}} />
          <h2>About</h2>
          <dl class="facts">
            <dt>Schema</dt>
            <dd>
              <Link href={schemaPath(schema)}>{schema}</Link>, version {record.schema_version}
            </dd>
            <dt>Belongs to</dt>
            <dd>{owners(record)}</dd>
            <dt>Status</dt>
            <dd>
              <Status value={record.embedding_status} />
              {record.embedding_error ? <span class="muted"> {record.embedding_error}</span> : null}
            </dd>
            <dt>Written</dt>
            <dd>
              <Time value={record.created_at} />
            </dd>
            <dt>Changed</dt>
            <dd>
              <Time value={record.updated_at} />
            </dd>
            <dt>Metadata</dt>
            <dd>
              <pre class="json">{JSON.stringify(record.metadata ?? {}, null, 2)}</pre>
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{record.id}</code>
            </dd>
          </dl>
        </>
      ) : null}
    </>
  );
}
