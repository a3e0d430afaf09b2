import { expect } from 'chai';
import Koa from 'koa';
import supertest from 'supertest';
import { errorHandler } from '../../api/middleware/errors.js';
import { createLogger } from '../../lib/logger.js';
import { coerceQuery } from '../../api/route.js';
import { registryCode } from '../../lib/errors.js';
import { ajv, assertValid } from '../../lib/validation.js';

describe('query coercion', () => {
  const schema = { type: 'object', properties: { limit: { type: 'integer' }, deep: { type: 'boolean' }, q: { type: 'string' } } };

  it('turns declared numbers and booleans into values and leaves the rest for validation', () => {
    expect(coerceQuery(schema, { limit: '20', deep: 'true', q: '42' })).to.deep.equal({ limit: 20, deep: true, q: '42' });
    expect(coerceQuery(schema, { limit: 'ten', deep: 'yes' })).to.deep.equal({ limit: 'ten', deep: 'yes' });
  });

  it('refuses a parameter given twice, naming each, unless the schema declares it a list', () => {
    const refusal = (query: Record<string, string | string[]>) => {
      try {
        coerceQuery(schema, query);
      } catch (err) {
        return err as { status: number; code: string; detail: string; errors: Array<{ path: string; message: string }> };
      }
      return expect.fail('should have thrown');
    };
    const once = refusal({ limit: ['1', '2'], q: 'x' });
    expect(once).to.include({ status: 400, code: 'validation_failed', detail: 'Invalid query string: /limit is given 2 times; send it once.' });
    expect(refusal({ q: ['a', 'b', 'c'], other: ['1', '1'] }).errors).to.deep.equal([
      { path: '/q', message: 'is given 3 times; send it once' },
      { path: '/other', message: 'is given 2 times; send it once' },
    ]);
    const lists = { type: 'object', properties: { tag: { type: 'array', items: { type: 'string' } }, n: { type: 'array', items: { type: 'integer' } } } };
    expect(coerceQuery(lists, { tag: ['a', 'b'], n: '3' })).to.deep.equal({ tag: ['a', 'b'], n: [3] });
  });

  it('gives a parameter left out the default its schema documents', () => {
    const paging = { type: 'object', properties: { limit: { type: 'integer', default: 50 }, offset: { type: 'integer', default: 0 } } };
    expect(coerceQuery(paging, {})).to.deep.equal({ limit: 50, offset: 0 });
    expect(coerceQuery(paging, { limit: '7' })).to.deep.equal({ limit: 7, offset: 0 });
  });
});

describe('validation errors', () => {
  const validate = ajv.compile({
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string' }, kind: { type: 'string', enum: ['a', 'b'] } },
  });

  it('names every problem by JSON pointer in one 400', () => {
    try {
      assertValid(validate, { kind: 'c', extra: 1 }, '', 'request body');
      expect.fail('should have thrown');
    } catch (err) {
      const e = err as { status: number; code: string; errors: Array<{ path: string; message: string }>; detail: string };
      expect(e.status).to.equal(400);
      expect(e.code).to.equal('validation_failed');
      expect(e.errors).to.deep.include({ path: '/name', message: 'is required' });
      expect(e.errors).to.deep.include({ path: '/extra', message: 'is not a known field' });
      expect(e.errors).to.deep.include({ path: '/kind', message: 'must be one of "a", "b"' });
      expect(e.detail).to.match(/and 2 more/);
    }
  });

  it('maps HTTP statuses onto the registry error codes', () => {
    expect([400, 401, 403, 404, 409].map(registryCode)).to.deep.equal([
      'invalid_argument',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
    ]);
  });
});

describe('dependency errors', () => {
  const answer = async (thrown: unknown) => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      ctx.state.baseLog = createLogger('silent');
      await next();
    });
    app.use(errorHandler());
    app.use(() => {
      throw thrown;
    });
    return supertest(app.callback()).get('/v1/anything');
  };

  it('answers 503 service_unavailable with Retry-After when the database connection is gone, however the driver words it', async () => {
    const closed = Object.assign(new Error("Can't add new command when connection is in closed state"), { fatal: true });
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    for (const err of [closed, reset]) {
      const res = await answer(err);
      expect(res.status, err.message).to.equal(503);
      expect(res.body.code).to.equal('service_unavailable');
      expect(res.headers['retry-after']).to.be.a('string');
    }
  });

  it('keeps an error Cairn did not expect a 500 that reveals nothing', async () => {
    const res = await answer(new Error('secret internals'));
    expect(res.status).to.equal(500);
    expect(JSON.stringify(res.body)).to.not.include('secret');
  });
});
