import { useEffect, useState } from 'preact/hooks';
import { api, unwrap, type Session } from './api';
import { ErrorNote } from './components';

/** An operator's session (signed in with ADMIN_TOKEN): which project it acts in, a switch to any other, and the queue board. */
export function OperatorBar({ project, onSwitched }: { project: string; onSwitched: (session: Session) => void }) {
  const [projects, setProjects] = useState<string[]>([project]);
  const [chosen, setChosen] = useState(project);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    unwrap(api.GET('/console/api/projects')).then((answer) => setProjects(answer.projects.map((p) => p.name)), setError);
  }, []);
  useEffect(() => setChosen(project), [project]);

  async function switchTo(event: Event) {
    event.preventDefault();
    try {
      const session = await unwrap(api.PUT('/console/api/session/project', { body: { project: chosen } }));
      onSwitched({ signed_in: true, project: session.project, key_id: session.key_id, operator: true });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="operator" onSubmit={switchTo} aria-label="Operator">
      <a href="/admin/queues">Queue board</a>
      <label for="operator-project">Project</label>
      <select id="operator-project" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
        {projects.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <button type="submit" disabled={chosen === project}>
        Switch
      </button>
      <ErrorNote error={error} />
    </form>
  );
}
