import { expect } from 'chai';
import { coerceQuery } from '../../api/route.js';
import { registryCode } from '../../lib/errors.js';
import { ajv, assertValid } from '../../lib/validation.js';

describe('query coercion', () => {
  const schema = { type: 'object', properties: { limit: { type: 'integer' }, deep: { type: 'boolean' }, q: { type: 'string' } } };

  it('turns declared numbers and booleans into values and leaves the rest for validation', () => {
    expect(coerceQuery(schema, { limit: '20', deep: 'true', q: '42' })).to.deep.equal({ limit: 20, deep: true, q: '42' });
    expect(coerceQuery(schema, { limit: 'ten', deep: 'yes' })).to.deep.equal({ limit: 'ten', deep: 'yes' });
    expect(coerceQuery(schema, { limit: ['1', '2'] })).to.deep.equal({ limit: 2 });
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
