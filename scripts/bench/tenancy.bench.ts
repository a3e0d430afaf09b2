import { parseArgs } from 'node:util';
import { DataType, type FieldType, MilvusClient } from '@zilliz/milvus2-sdk-node';
import { seededRandom } from '../../lib/seeded-random.js';
import { percentile, production } from './children.js';

// Tenancy in a shared Milvus collection: `project_id` as a partition key (what MilvusVectorStore
// does) against `project_id` as a plain filtered field. Same rows, same queries, same filter
// expression; only the schema differs. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    projects: { type: 'string', default: '20' },
    'per-project': { type: 'string', default: '1000' },
    queries: { type: 'string', default: '100' },
  },
});
const PROJECTS = Number(args.projects);
const PER_PROJECT = Number(args['per-project']);
const QUERIES = Number(args.queries);
const DIM = 384;

const client = new MilvusClient({ address: production.milvusAddress, timeout: 300_000 });
const next = seededRandom(11);
const vector = () => Array.from({ length: DIM }, () => next() - 0.5);

function schema(partitionKey: boolean): FieldType[] {
  return [
    { name: 'id', data_type: DataType.VarChar, is_primary_key: true, max_length: 128 },
    { name: 'project_id', data_type: DataType.VarChar, max_length: 64, is_partition_key: partitionKey },
    { name: 'vector', data_type: DataType.FloatVector, dim: DIM },
  ];
}

async function build(name: string, partitionKey: boolean): Promise<void> {
  await client.dropCollection({ collection_name: name }).catch(() => undefined);
  await client.createCollection({ collection_name: name, fields: schema(partitionKey), consistency_level: 'Strong' });
  await client.createIndex({ collection_name: name, field_name: 'vector', index_type: 'HNSW', metric_type: 'COSINE', params: { M: 16, efConstruction: 200 } });
  await client.loadCollection({ collection_name: name });
  const rows = [];
  for (let p = 0; p < PROJECTS; p++) for (let i = 0; i < PER_PROJECT; i++) rows.push({ id: `p${p}:${i}`, project_id: `project-${p}`, vector: vector() });
  for (let i = 0; i < rows.length; i += 1000) await client.insert({ collection_name: name, data: rows.slice(i, i + 1000) });
  await client.flushSync({ collection_names: [name] });
}

async function measure(name: string, queries: number[][]): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (const [i, q] of queries.entries()) {
    const start = performance.now();
    const res = await client.search({
      collection_name: name,
      anns_field: 'vector',
      data: q,
      limit: 10,
      filter: `project_id == "project-${i % PROJECTS}"`,
      params: { ef: 64 },
      consistency_level: 'Strong' as never,
    });
    times.push(performance.now() - start);
    if (res.results.length !== 10) throw new Error(`${name}: ${res.results.length} hits`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

const names = { key: 'bench_tenancy_partition_key', field: 'bench_tenancy_filtered_field' };
await build(names.key, true);
await build(names.field, false);
const queries = Array.from({ length: QUERIES }, vector);
await measure(names.key, queries.slice(0, 10));
await measure(names.field, queries.slice(0, 10));
// alternate, so drift hits both alike
const key: number[][] = [];
const field: number[][] = [];
for (let round = 0; round < 2; round++) {
  key.push(Object.values(await measure(names.key, queries)));
  field.push(Object.values(await measure(names.field, queries)));
}
const result = {
  bench: 'tenancy',
  projects: PROJECTS,
  perProject: PER_PROJECT,
  queries: QUERIES,
  partitionKey: key.map(([p50, p99]) => ({ p50, p99 })),
  filteredField: field.map(([p50, p99]) => ({ p50, p99 })),
};
process.stdout.write(
  `partition key : p50 ${key.map((k) => (k[0] as number).toFixed(1)).join(' / ')} ms, p99 ${key.map((k) => (k[1] as number).toFixed(1)).join(' / ')} ms\n` +
    `filtered field: p50 ${field.map((f) => (f[0] as number).toFixed(1)).join(' / ')} ms, p99 ${field.map((f) => (f[1] as number).toFixed(1)).join(' / ')} ms\n` +
    `${JSON.stringify(result)}\n`,
);
for (const name of Object.values(names)) await client.dropCollection({ collection_name: name });
await client.closeConnection();
