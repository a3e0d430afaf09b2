import { useState } from 'preact/hooks';
import { api, unwrap, type Session } from '../api';
import { ErrorNote, useSubmit } from '../components';

/** Sign-in with a project API key: the server keeps a session in an HttpOnly cookie, the page keeps nothing. */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const session = await unwrap(api.POST('/console/api/session', { body: { key: key.trim() } }));
    setKey('');
    onSignedIn({ signed_in: true, project: session.project, key_id: session.key_id, operator: session.operator });
  });

  return (
    <main class="sign-in" id="content">
      <form onSubmit={submit} class="card">
        <h1>Cairn console</h1>
        <p class="muted">Sign in with one of your project's API keys.</p>
        <ErrorNote error={error} />
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          autoFocus
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="hint">
          <code>npm run keys -- create --project NAME</code> prints a new key. An operator may sign in with the server's <code>ADMIN_TOKEN</code>, to
          choose among every project.
        </p>
      </form>
    </main>
  );
}
