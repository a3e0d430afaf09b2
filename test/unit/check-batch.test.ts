import { expect } from 'chai';
import { AppError, badRequest, checkBatch, notFound } from '../../lib/errors.js';

describe('checkBatch', () => {
  const check = (n: number, at: string): number => {
    if (n < 0) throw badRequest('validation_failed', 'negative', [{ path: `${at}/value`, message: 'must be at least 0' }]);
    if (n > 100) throw badRequest('too_big', 'Too big.');
    return n * 2;
  };

  it('returns every result in order when every item passes', () => {
    expect(checkBatch([1, 2, 3], '/items', 'items', check)).to.deep.equal([2, 4, 6]);
  });

  it('lists the problems of every bad item by index, a problem without fields at its item', () => {
    let thrown: unknown;
    try {
      checkBatch([1, -1, 2, 500, -3], '/items', 'items', check);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(AppError);
    const err = thrown as AppError;
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('validation_failed');
    expect(err.detail).to.equal('3 of 5 items are invalid, so none was stored: /items/1/value must be at least 0 (and 2 more).');
    expect(err.errors).to.deep.equal([
      { path: '/items/1/value', message: 'must be at least 0' },
      { path: '/items/3', message: 'Too big.' },
      { path: '/items/4/value', message: 'must be at least 0' },
    ]);
  });

  it('lets an error that is not a 400 through as it is', () => {
    expect(() => checkBatch([1], '/items', 'items', () => { throw notFound('gone'); })).to.throw(AppError, 'gone');
  });
});
