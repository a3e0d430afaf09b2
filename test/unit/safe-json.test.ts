import { expect } from 'chai';
import { validateFlow, type Flow } from '../../core/agents/agents.js';
import { AppError } from '../../lib/errors.js';
import { assertSafeJson, hasLoneSurrogate, MAX_JSON_DEPTH } from '../../lib/validation.js';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { k: value } : [value];
  return value;
};

const refusal = (fn: () => void): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};

describe('request JSON safety', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels of objects and arrays and refuses one more`, () => {
    expect(() => assertSafeJson(nested(MAX_JSON_DEPTH))).not.to.throw();
    const err = refusal(() => assertSafeJson(nested(MAX_JSON_DEPTH + 1)));
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('too_deep');
  });

  it('walks 100,000 levels without overflowing the stack', () => {
    expect(refusal(() => assertSafeJson(nested(100_000))).code).to.equal('too_deep');
  });

  it('finds lone surrogates in values and keys, and says where', () => {
    expect(hasLoneSurrogate('\ud800')).to.equal(true);
    expect(hasLoneSurrogate('a\udc00')).to.equal(true);
    expect(hasLoneSurrogate('\udc00\ud800')).to.equal(true);
    expect(hasLoneSurrogate('\u{1F600} café')).to.equal(false);
    const inValue = refusal(() => assertSafeJson({ messages: [{ content: 'ok' }, { content: 'x\ud83d' }] }));
    expect(inValue.code).to.equal('invalid_unicode');
    expect(inValue.errors).to.deep.equal([{ path: '/messages/1/content', message: 'holds an unpaired surrogate' }]);
    expect(refusal(() => assertSafeJson({ metadata: { 'a/b\udfff': 1 } })).errors?.[0]?.path).to.match(/^\/metadata\/a~1b/);
    expect(() => assertSafeJson({ user: '\u{1F600}', list: [null, true, 1.5, 'x'] })).not.to.throw();
  });
});

describe('flow references', () => {
  const flow: Flow = {
    version: '1',
    start: 'find',
    nodes: {
      find: { type: 'retrieve', knowledge: ['handbook', 'gone'], next: 'call' },
      call: { type: 'tool', tool: 'lookup', next: 'keep' },
      keep: { type: 'extract', schema: 'lead', next: 'done' },
      done: { type: 'respond' },
    },
  };

  it('checks only the kinds of reference it is given', () => {
    expect(() => validateFlow(flow)).not.to.throw();
    expect(() => validateFlow(flow, { knowledge: new Set(['handbook', 'gone']), schemas: new Set(['lead']) })).not.to.throw();
  });

  it('lists every missing knowledge base, tool and schema with the node that names it', () => {
    const err = refusal(() => validateFlow(flow, { knowledge: new Set(['handbook']), schemas: new Set(), tools: new Set(['other']) }));
    expect(err.code).to.equal('invalid_flow');
    expect(err.errors).to.deep.equal([
      { path: '/flow/nodes/find/knowledge/1', message: 'names no knowledge base of this project ("gone")' },
      { path: '/flow/nodes/call/tool', message: 'names no tool of this agent ("lookup")' },
      { path: '/flow/nodes/keep/schema', message: 'names no record schema of this project ("lead")' },
    ]);
  });
});
