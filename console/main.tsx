import type { ComponentChildren } from 'preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ENTITY_TYPES, onSignedOut, unwrap, type EntityType, type Session } from './api';
import { ErrorNote, Loading, PageTitle } from './components';
import { AgentPage, AgentsPage, RunPage } from './pages/agents';
import { EntitiesPage } from './pages/entities';
import { EntityPage } from './pages/entity';
import { DocumentPage, KnowledgeBasePage, KnowledgeBasesPage } from './pages/knowledge';
import { IndexesPage, IndexPage } from './pages/indexes';
import { OperatorBar } from './operator';
import { MemoryPage } from './pages/memory';
import { OperationsPage } from './pages/operations';
import { ProjectPage } from './pages/project';
import { RecordPage } from './pages/record';
import { SchemaPage } from './pages/schema';
import { SchemasPage } from './pages/schemas';
import { SearchPage } from './pages/search';
import { SignIn } from './pages/sign-in';
import { WebhooksPage } from './pages/webhooks';
import { BASE, Link, useLocation } from './router';
import './styles.css';

/**
 * The console: a project API key signs in (sessions of an operator, who would choose a project,
 * are a later step: they would be another kind of Session); then its pages, each a path under
 * /console.
 */
function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<unknown>(null);
  const location = useLocation();

  useEffect(() => {
    onSignedOut(() => setSession({ signed_in: false }));
    unwrap(api.GET('/console/api/session')).then(setSession, setError);
  }, []);

  if (session === null) return <main id="content">{error ? <ErrorNote error={error} /> : <Loading />}</main>;
  if (!session.signed_in) return <SignIn onSignedIn={setSession} />;

  async function signOut() {
    await unwrap(api.DELETE('/console/api/session')).catch(() => undefined);
    setSession({ signed_in: false });
  }

  return (
    <Layout project={session.project ?? ''} operator={session.operator === true} onSwitched={setSession} path={location.pathname} onSignOut={signOut}>
      <Page key={session.project} path={location.pathname} params={location.searchParams} />
    </Layout>
  );
}

function Page({ path, params }: { path: string; params: URLSearchParams }) {
  const parts = path.slice(BASE.length).split('/').filter(Boolean).map(decodeURIComponent);
  const [section, first, second, third] = parts;
  if (parts.length === 0 || (section === 'entities' && parts.length === 1)) return <EntitiesPage />;
  if (section === 'entities' && first && second && (ENTITY_TYPES as readonly string[]).includes(first) && parts.length === 3) {
    return <EntityPage key={path} type={first as EntityType} id={second} />;
  }
  if (section === 'memories' && first && parts.length === 2) return <MemoryPage key={path} id={first} />;
  if (section === 'search' && parts.length === 1) return <SearchPage params={params} />;
  if (section === 'knowledge' && parts.length === 1) return <KnowledgeBasesPage />;
  if (section === 'knowledge' && first && parts.length === 2) return <KnowledgeBasePage key={path} name={first} />;
  if (section === 'knowledge' && first && second === 'documents' && third && parts.length === 4) {
    return <DocumentPage key={path} kb={first} id={third} chunk={params.get('chunk')} />;
  }
  if (section === 'agents' && parts.length === 1) return <AgentsPage />;
  if (section === 'agents' && first && parts.length === 2) return <AgentPage key={path} name={first} />;
  if (section === 'agents' && first && second === 'runs' && third && parts.length === 4) return <RunPage key={path} name={first} id={third} />;
  if (section === 'project' && parts.length === 1) return <ProjectPage />;
  if (section === 'webhooks' && parts.length === 1) return <WebhooksPage />;
  if (section === 'indexes' && parts.length === 1) return <IndexesPage />;
  if (section === 'indexes' && first && parts.length === 2) return <IndexPage key={path} name={first} />;
  if (section === 'operations' && parts.length === 1) return <OperationsPage />;
  if (section === 'schemas' && parts.length === 1) return <SchemasPage />;
  if (section === 'schemas' && first && parts.length === 2) return <SchemaPage key={path} name={first} />;
  if (section === 'schemas' && first && second === 'records' && parts[3] && parts.length === 4) return <RecordPage key={path} schema={first} id={parts[3]} />;
  return (
    <>
      <PageTitle>Not found</PageTitle>
      <p>
        The console has no page here. <Link href={BASE}>See the entities</Link>.
      </p>
    </>
  );
}

/** The project's own pages, each a link of the navigation. */
const PROJECT_SECTIONS = ['project', 'webhooks', 'indexes', 'operations'] as const;

function Layout({
  project,
  operator,
  onSwitched,
  path,
  onSignOut,
  children,
}: {
  project: string;
  operator: boolean;
  onSwitched: (session: Session) => void;
  path: string;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  const under = (section: string) => path.startsWith(`${BASE}/${section}`);
  const onEntities = !['search', 'schemas', 'knowledge', 'agents', ...PROJECT_SECTIONS].some(under);
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Cairn console</span>
        <nav aria-label="Console">
          <ul>
            <li>
              <Link href={BASE} current={onEntities}>
                Entities
              </Link>
            </li>
            <li>
              <Link href={`${BASE}/search`} current={path.startsWith(`${BASE}/search`)}>
                Search
              </Link>
            </li>
            <li>
              <Link href={`${BASE}/schemas`} current={path.startsWith(`${BASE}/schemas`)}>
                Schemas
              </Link>
            </li>
            <li>
              <Link href={`${BASE}/knowledge`} current={path.startsWith(`${BASE}/knowledge`)}>
                Knowledge
              </Link>
            </li>
            <li>
              <Link href={`${BASE}/agents`} current={path.startsWith(`${BASE}/agents`)}>
                Agents
              </Link>
            </li>
            {PROJECT_SECTIONS.map((section) => (
              <li key={section}>
                <Link href={`${BASE}/${section}`} current={under(section)}>
                  {section[0]?.toUpperCase()}
                  {section.slice(1)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        {operator ? (
          <OperatorBar project={project} onSwitched={onSwitched} />
        ) : (
          <span class="project">
            Project <strong>{project}</strong>
          </span>
        )}
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="content">{children}</main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
