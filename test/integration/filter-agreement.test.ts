import { expect } from 'chai';
import fc from 'fast-check';
import { parseFilter, toMilvusExpr, toPredicate } from '../../contracts/filter/filter.js';
import { MilvusConnection } from '../../db/milvus.js';
import { MilvusVectorStore } from '../../db/vectors/milvus.store.js';
import type { CollectionSpec, VectorPoint } from '../../contracts/vector-store.js';
import { createLogger } from '../../lib/logger.js';
import { COLUMNS, filterArb, rowArb, SCOPE } from '../filter-arbitraries.js';
import { isProduction, TEST_MILVUS_ADDRESS, unique } from '../helpers.js';

const ROWS = 300;
const FILTERS = 200;
const SEED = 20_241_105;

if (isProduction) {
  describe('filter agreement between Milvus and the in-memory predicate', function () {
    this.timeout(300_000);
    const log = createLogger('silent');
    let connection: MilvusConnection;
    let store: MilvusVectorStore;
    const spec: CollectionSpec = { name: unique('t').replace('-', '_'), dimension: 4, metric: 'cosine', columns: { ...COLUMNS } };

    before(() => {
      connection = new MilvusConnection(TEST_MILVUS_ADDRESS, null, log);
      store = new MilvusVectorStore(connection, log);
    });

    after(async () => {
      await store.dropCollection(spec.name);
      await connection.close();
    });

    it(`returns exactly the rows the predicate accepts, for ${FILTERS} random filters over ${ROWS} random rows`, async () => {
      const rows = fc.sample(rowArb, { seed: SEED, numRuns: ROWS });
      const vector = (i: number): number[] => [1 + (i % 7), 1 + (i % 5), 1 + (i % 3), 1];
      const points: VectorPoint[] = rows.map((row, i) => ({ id: `r${i}`, values: vector(i), columns: row.columns, metadata: row.metadata }));
      await store.upsert(spec, 'proj-a', points);
      // Another project's rows under the same ids, every one matching nothing in proj-a's answers.
      await store.upsert(spec, 'proj-b', points.slice(0, 100).map((p, i) => ({ ...p, values: vector(i + 1) })));
      expect(await store.count(spec, 'proj-a')).to.equal(ROWS);

      const filters = fc.sample(filterArb(3), { seed: SEED + 1, numRuns: FILTERS });
      const failures: string[] = [];
      let nonTrivial = 0;
      for (const filter of filters) {
        const node = parseFilter(filter, SCOPE);
        const accepts = toPredicate(node);
        const expected = points.filter((_, i) => accepts(rows[i] as (typeof rows)[number])).map((p) => p.id).sort();
        if (expected.length > 0 && expected.length < ROWS) nonTrivial += 1;
        const count = await store.count(spec, 'proj-a', node);
        const found = (await store.search(spec, 'proj-a', [1, 1, 1, 1], { topK: 1000, filter: node })).map((m) => m.id).sort();
        if (count !== expected.length || JSON.stringify(found) !== JSON.stringify(expected)) {
          const missing = expected.filter((id) => !found.includes(id));
          const extra = found.filter((id) => !expected.includes(id));
          failures.push(
            `${JSON.stringify(filter)}\n  expr: ${toMilvusExpr(node)}\n  expected ${expected.length}, count ${count}, search ${found.length}; ` +
              `missing ${missing.slice(0, 5).map((id) => `${id} ${JSON.stringify(rows[Number(id.slice(1))])}`).join('; ')}; extra ${extra.slice(0, 5).join(', ')}`,
          );
        }
      }
      expect(failures, failures.slice(0, 5).join('\n\n')).to.deep.equal([]);
      // The filters must not all be trivially empty or complete, or agreement would prove little.
      expect(nonTrivial).to.be.greaterThan(FILTERS / 3);
    });
  });
}
