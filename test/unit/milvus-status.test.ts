import { ErrorCode, type ResStatus } from '@zilliz/milvus2-sdk-node';
import { expect } from 'chai';
import { isTransient } from '../../lib/errors.js';
import { check } from '../../db/vectors/milvus.store.js';
import { AppError } from '../../lib/errors.js';

const status = (code: number, reason: string): ResStatus => ({ error_code: ErrorCode.UnexpectedError, reason, code, retriable: false, detail: reason }) as ResStatus;

function thrown(s: ResStatus): unknown {
  try {
    check(s, 'upsert');
  } catch (err) {
    return err;
  }
  return null;
}

describe('milvus status mapping', () => {
  it('makes a status that blames the input (parameter invalid, missing, too large) a permanent 400', () => {
    for (const code of [1100, 1101, 1102]) {
      const err = thrown(status(code, 'json string length 70000 exceeds max length 65536: invalid parameter'));
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).status).to.equal(400);
      expect((err as AppError).detail).to.match(/exceeds max length/);
      expect(isTransient(err), `code ${code}`).to.equal(false);
    }
  });

  it('keeps other failures retryable, whatever their wording', () => {
    for (const s of [status(65535, 'length exceeds max limit'), status(101, 'collection not loaded'), status(2, 'service not ready')]) {
      const err = thrown(s);
      expect(err).to.be.instanceOf(Error);
      expect(err).not.to.be.instanceOf(AppError);
      expect(isTransient(err)).to.equal(true);
    }
    expect(thrown({ ...status(0, ''), error_code: ErrorCode.SUCCESS })).to.equal(null);
  });
});
