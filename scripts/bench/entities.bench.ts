import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import nlp from 'compromise';
import winkNLP, { type ItemEntity } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { entitiesOf, entityKey, withoutSpeaker, type EntityKind } from '../../core/memory/entities.js';

// Named entities of memories: precision / recall / F1 per kind of each candidate on the labelled
// sample (test/fixtures/entities-sample.json), time per memory (warm) and the cost of loading
// the library (fresh process). A found entity matches an expected one of the same kind whose
// entityKey() is equal (case, spaces, a leading 'the', a possessive 's ignored). The speaker
// prefix of a chat line is removed for every candidate alike (the sample does not list it).

interface Labelled {
  text: string;
  entities: Array<{ text: string; kind: EntityKind }>;
}
type Found = Array<{ name: string; kind: EntityKind }>;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sample = JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/entities-sample.json'), 'utf8')) as Labelled[];
const KINDS: EntityKind[] = ['person', 'place', 'organization', 'product', 'date'];

const wink = winkNLP(model);

/** compromise alone: its people(), places(), organizations() and the terms it tags #Date. */
function compromiseEntities(text: string): Found {
  const doc = nlp(withoutSpeaker(text));
  const of = (view: { out(format: 'array'): string[] }, kind: EntityKind): Found => view.out('array').map((name) => ({ name, kind }));
  return [
    ...of(doc.people(), 'person'),
    ...of(doc.places(), 'place'),
    ...of(doc.organizations(), 'organization'),
    ...of(doc.match('#Date+'), 'date'),
  ];
}

const WINK_CUES: Record<string, EntityKind> = { in: 'place', to: 'place', from: 'place', at: 'organization', a: 'product', an: 'product', my: 'product' };

/** wink-nlp alone: its DATE entities, and each run of PROPN tags named by the word before it (else a person). */
function winkEntities(text: string): Found {
  const its = wink.its;
  const doc = wink.readDoc(withoutSpeaker(text));
  const found: Found = [];
  const inDate = new Set<number>();
  doc.entities().each((e: ItemEntity) => {
    if (e.out(its.type) !== 'DATE') return;
    const [from, to] = e.out(its.span) as unknown as [number, number];
    for (let i = from; i <= to; i++) inDate.add(i);
    found.push({ name: e.out(), kind: 'date' });
  });
  const values = doc.tokens().out(its.value) as string[];
  const pos = doc.tokens().out(its.pos) as string[];
  for (let i = 0; i < values.length; i++) {
    if (pos[i] !== 'PROPN' || inDate.has(i)) continue;
    let end = i + 1;
    while (end < values.length && (pos[end] === 'PROPN' || pos[end] === 'NUM') && !inDate.has(end)) end++;
    const name = values.slice(i, end).join(' ');
    found.push({ name, kind: /\d/.test(name) ? 'product' : (WINK_CUES[values[i - 1]?.toLowerCase() ?? ''] ?? 'person') });
    i = end - 1;
  }
  return found;
}

const candidates: Array<{ name: string; load: string; run: (text: string) => Found }> = [
  { name: 'compromise', load: `await import('compromise')`, run: compromiseEntities },
  { name: 'wink-nlp', load: `const w = (await import('wink-nlp')).default; w((await import('wink-eng-lite-web-model')).default)`, run: winkEntities },
  {
    name: 'wink-nlp + compromise lexicon (entitiesOf)',
    load: `await import(${JSON.stringify(path.join(root, 'core/memory/entities.ts'))})`,
    run: (text) => entitiesOf(text),
  },
];

interface Counts { tp: number; fp: number; fn: number }
function score(run: (text: string) => Found): { byKind: Record<EntityKind, Counts>; all: Counts; misses: string[] } {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, { tp: 0, fp: 0, fn: 0 }])) as Record<EntityKind, Counts>;
  const misses: string[] = [];
  for (const { text, entities } of sample) {
    const expected = entities.map((e) => `${e.kind}:${entityKey(e.text)}`);
    const found = [...new Set(run(text).map((e) => `${e.kind}:${entityKey(e.name)}`))];
    for (const f of found) {
      const at = expected.indexOf(f);
      const kind = f.split(':')[0] as EntityKind;
      if (at >= 0) {
        byKind[kind].tp++;
        expected.splice(at, 1);
      } else {
        byKind[kind].fp++;
        misses.push(`+ ${f}  ← ${text}`);
      }
    }
    for (const e of expected) {
      byKind[e.split(':')[0] as EntityKind].fn++;
      misses.push(`- ${e}  ← ${text}`);
    }
  }
  const all = KINDS.reduce((a, k) => ({ tp: a.tp + byKind[k].tp, fp: a.fp + byKind[k].fp, fn: a.fn + byKind[k].fn }), { tp: 0, fp: 0, fn: 0 });
  return { byKind, all, misses };
}

const prf = ({ tp, fp, fn }: Counts): string => {
  const p = tp / (tp + fp || 1);
  const r = tp / (tp + fn || 1);
  const f = (2 * p * r) / (p + r || 1);
  return `${p.toFixed(2)} / ${r.toFixed(2)} / ${f.toFixed(2)}`;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Median µs per call of `run` on each text, over `rounds` warm passes. */
function microseconds(run: (text: string) => unknown, texts: string[], rounds: number): number {
  for (const text of texts) run(text);
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const text of texts) {
      const t = performance.now();
      run(text);
      times.push((performance.now() - t) * 1000);
    }
  }
  return median(times);
}

/** Load time and RSS growth of importing the candidate in a fresh process. */
function loadCost(load: string): { ms: number; rssMb: number } {
  const code = `const rss = process.memoryUsage().rss; const t = performance.now(); ${load}; ` +
    `console.log(JSON.stringify({ ms: performance.now() - t, rssMb: (process.memoryUsage().rss - rss) / 1e6 }))`;
  const runs = [0, 1, 2].map(() =>
    JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })) as { ms: number; rssMb: number },
  );
  return { ms: median(runs.map((r) => r.ms)), rssMb: median(runs.map((r) => r.rssMb)) };
}

const line = 'Maya: We finally moved to Porto last week, Daniel starts at Lumen Health on Monday, ask Priya.';
const page = sample.map((s) => s.text).join(' ').slice(0, 2048);
const verbose = process.argv.includes('--misses');

console.log(`${sample.length} texts, ${sample.reduce((n, s) => n + s.entities.length, 0)} labelled entities\n`);
const rows: string[] = [];
for (const c of candidates) {
  const { byKind, all, misses } = score(c.run);
  const perMemory = microseconds(c.run, sample.map((s) => s.text), 20);
  const short = microseconds(c.run, [line], 500);
  const long = microseconds(c.run, [page], 50);
  const load = loadCost(c.load);
  console.log(`## ${c.name}   (P / R / F1)`);
  for (const k of KINDS) console.log(`  ${k.padEnd(13)} ${prf(byKind[k])}   (tp ${byKind[k].tp}, fp ${byKind[k].fp}, fn ${byKind[k].fn})`);
  console.log(`  ${'overall'.padEnd(13)} ${prf(all)}`);
  console.log(`  µs per memory (median, sample) ${perMemory.toFixed(0)}; 100-char line ${short.toFixed(0)}; 2 KB text ${long.toFixed(0)}`);
  console.log(`  load ${load.ms.toFixed(0)} ms, RSS +${load.rssMb.toFixed(0)} MB\n`);
  if (verbose) console.log(misses.join('\n') + '\n');
  rows.push(`| ${c.name} | ${KINDS.map((k) => prf(byKind[k]).split(' / ')[2]).join(' | ')} | ${prf(all)} | ${perMemory.toFixed(0)} | ${short.toFixed(0)} | ${long.toFixed(0)} | ${load.ms.toFixed(0)} | ${load.rssMb.toFixed(0)} |`);
}
console.log(`| candidate | F1 ${KINDS.join(' | F1 ')} | overall P / R / F1 | µs/memory | µs 100 chars | µs 2 KB | load ms | RSS MB |`);
console.log(`|${'---|'.repeat(KINDS.length + 7)}`);
console.log(rows.join('\n'));
