import { useState } from 'preact/hooks';
import type { SearchBody } from './api';

// A search request as code to copy: curl, mem0's JavaScript client and mem0's Python client. The
// API key is never in them: each reads it from the environment variable CAIRN_API_KEY.

const KEY_VARIABLE = 'CAIRN_API_KEY';

/** The request as a shell command. */
export function curlCommand(body: SearchBody, origin: string): string {
  const json = JSON.stringify(body).replaceAll("'", "'\\''");
  return `curl -X POST '${origin}/v3/memories/search/' \\\n  -H "Authorization: Token $${KEY_VARIABLE}" \\\n  -H 'Content-Type: application/json' \\\n  -d '${json}'`;
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The request through mem0's JavaScript client (which sends its options' names in snake case). */
export function jsSnippet(body: SearchBody, origin: string): string {
  const { query, ...options } = body;
  const named = Object.fromEntries(Object.entries(options).map(([k, v]) => [camel(k), v]));
  return [
    '// MEM0_TELEMETRY=false node search.mjs',
    "import { MemoryClient } from 'mem0ai';",
    `const client = new MemoryClient({ apiKey: process.env.${KEY_VARIABLE}, host: ${JSON.stringify(origin)} });`,
    `const { results } = await client.search(${JSON.stringify(query)}, ${JSON.stringify(named, null, 2)});`,
  ].join('\n');
}

/** A JSON value as a Python literal. */
export function pythonLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`)
    .join(', ')}}`;
}

/** The request through mem0's Python client. */
export function pythonSnippet(body: SearchBody, origin: string): string {
  const { query, ...options } = body;
  const args = [pythonLiteral(query), ...Object.entries(options).map(([k, v]) => `${k}=${pythonLiteral(v)}`)];
  return [
    '# MEM0_TELEMETRY=false python search.py',
    'import os',
    'from mem0 import MemoryClient',
    `client = MemoryClient(api_key=os.environ[${JSON.stringify(KEY_VARIABLE)}], host=${JSON.stringify(origin)})`,
    `results = client.search(${args.join(', ')})`,
  ].join('\n');
}

/** A button that copies `code`, and a status that says it did. */
export function CopyButton({ code, label }: { code: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <button
        type="button"
        aria-label={label}
        onClick={() =>
          navigator.clipboard.writeText(code).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy
      </button>
      <span role="status" class="muted">
        {copied ? ' Copied.' : ''}
      </span>
    </>
  );
}

/** A piece of code under its title, with its copy button. */
export function Snippet({ title, code }: { title: string; code: string }) {
  return (
    <div class="snippet">
      <h3>{title}</h3>
      <pre>{code}</pre>
      <CopyButton code={code} label={`Copy the ${title} code`} />
    </div>
  );
}

/** One search request as curl, mem0 JavaScript and mem0 Python. */
export function RequestSnippets({ body }: { body: SearchBody }) {
  const origin = location.origin;
  return (
    <div class="snippets">
      <Snippet title="curl" code={curlCommand(body, origin)} />
      <Snippet title="mem0 JavaScript" code={jsSnippet(body, origin)} />
      <Snippet title="mem0 Python" code={pythonSnippet(body, origin)} />
    </div>
  );
}
