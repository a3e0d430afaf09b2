import { createRequire } from 'node:module';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { json, serve, type TestServer } from '../http-server.js';
import { isProduction, newProject, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Redis Cluster: BullMQ's scripts touch many keys of a queue at once, which a cluster allows only
// within one hash slot. Every key Cairn writes starts with QUEUE_PREFIX as written, so a prefix
// written as a hash tag ({name}) puts all of a deployment's keys in one slot; checked here on the
// single test node with the slot function Redis Cluster uses (CRC16 of the hash tag, as ioredis
// computes it).

const keySlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

if (isProduction) {
  describe('Redis keys (production)', function () {
    this.timeout(60_000);
    let t: TestRuntime;
    let redis: Redis;
    let tool: TestServer;

    before(async () => {
      tool = await serve((req, res) => json(res, 200, { order_id: Number(req.url.split('/').pop()), status: 'shipped' }));
      t = await startRuntime({ env: { TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1', QUEUE_PREFIX: `{${unique('tag').replace(/-/g, '')}}` } });
      redis = new Redis(t.env.REDIS_URL as string);
    });
    after(async () => {
      redis?.disconnect();
      await t?.close();
      await tool?.close();
    });

    /** Every key of this deployment's prefix, wherever the prefix appears in it. */
    async function keysOfDeployment(prefix: string): Promise<string[]> {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return keys;
    }

    it('with QUEUE_PREFIX written as a hash tag, puts every key it writes (queues, key cache, change counts, tool budgets) in one hash slot', async () => {
      const auth = token((await newProject(t)).key);
      const user = unique('user');
      // a memory (queued indexing, memory change counts), an agent (configuration change counts)
      // whose tool is called (its budget), all with an API key (the key cache)
      const added = await t.http.post('/v3/memories/add').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I like tea' }], user_id: user, infer: false });
      expect(added.status, JSON.stringify(added.body)).to.be.oneOf([200, 201]);
      const agent = unique('agent');
      expect((await t.http.post('/v1/agents').set('Authorization', auth).send({ name: agent })).status).to.equal(201);
      const toolAdded = await t.http
        .post(`/v1/agents/${agent}/tools`)
        .set('Authorization', auth)
        .send({
          name: 'lookup_order',
          description: 'Look up an order by its order id',
          http: { url: `${tool.base}/orders/{order_id}`, method: 'GET' },
          parameters: { type: 'object', properties: { order_id: { type: 'integer', description: 'The order id' } }, required: ['order_id'] },
          allowed_hosts: ['127.0.0.1'],
        });
      expect(toolAdded.status, JSON.stringify(toolAdded.body)).to.equal(201);
      const chat = await t.http.post(`/v1/agents/${agent}/chat`).set('Authorization', auth).send({ messages: [{ role: 'user', content: 'Please look up order 12345' }] });
      expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
      expect(tool.requests).to.have.length(1);

      const prefix = t.env.QUEUE_PREFIX as string;
      const kinds = ['embedding', 'api-key', 'memory-changes', 'config-changes', 'tool-rate'];
      const keys = await waitFor(
        async () => {
          const found = await keysOfDeployment(prefix);
          return kinds.every((kind) => found.some((k) => k.includes(`:${kind}:`))) ? found : null;
        },
        { message: `keys of every kind (${kinds.join(', ')})` },
      );
      for (const key of keys) expect(key.startsWith(`${prefix}:`), `${key} starts with the hash tag`).to.equal(true);
      const slots = new Set(keys.map(keySlot));
      expect([...slots], 'hash slots of the deployment’s keys').to.deep.equal([keySlot(prefix)]);
    });
  });
}
