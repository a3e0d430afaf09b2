import { useEffect, useState } from 'preact/hooks';
import { api, unwrap, type Entity, type EntityType } from '../api';
import { EntityTypeField, ErrorNote, Loading, PageTitle, Time } from '../components';
import { entityPath, Link, navigate } from '../router';

/** The users, agents, apps and runs the project's memories belong to, with their counts. */
export function EntitiesPage() {
  const [entities, setEntities] = useState<Entity[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    unwrap(api.GET('/v1/entities'))
      .then((answer) => setEntities(answer.results ?? []))
      .catch(setError);
  }, []);

  return (
    <>
      <PageTitle>Entities</PageTitle>
      <p class="muted">Whom the project's memories belong to, the latest written first.</p>
      <ErrorNote error={error} />
      {entities === null && error === null ? <Loading /> : null}
      {entities !== null && entities.length === 0 ? <p>No memories yet: open an entity below and add one, or add them through the API.</p> : null}
      {entities !== null && entities.length > 0 ? (
        <table>
          <caption class="visually-hidden">Entities</caption>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Entity</th>
              <th scope="col" class="number">
                Memories
              </th>
              <th scope="col">Last write</th>
            </tr>
          </thead>
          <tbody>
            {entities.map((e) => (
              <tr key={`${e.type}:${e.name}`}>
                <td>{e.type}</td>
                <td>
                  <Link href={entityPath(e.type ?? 'user', e.name ?? '')}>{e.name}</Link>
                </td>
                <td class="number">{e.total_memories}</td>
                <td>
                  <Time value={e.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <OpenEntity />
    </>
  );
}

/** Opens any entity's page by its id, one with no memories yet included. */
function OpenEntity() {
  const [type, setType] = useState<EntityType>('user');
  const [id, setId] = useState('');
  return (
    <form
      class="inline-form"
      aria-labelledby="open-entity"
      onSubmit={(event) => {
        event.preventDefault();
        if (id.trim() !== '') navigate(entityPath(type, id.trim()));
      }}
    >
      <h2 id="open-entity">Open an entity</h2>
      <div class="fields">
        <EntityTypeField id="open-type" value={type} onChange={setType} />
        <div>
          <label for="open-id">Id</label>
          <input id="open-id" required value={id} onInput={(e) => setId(e.currentTarget.value)} />
        </div>
        <button type="submit">Open</button>
      </div>
    </form>
  );
}
