/**
 * Response serializers compiled on first use (server/lazy-serializers.ts): the same text as
 * Fastify's eager ones, schema filtering included (a field the schema does not name is never
 * sent). Every route's answers go through them in the route and contract tests.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory } from '../../server/lazy-serializers.js';

const schema = { type: 'object', properties: { id: { type: 'string' }, count: { type: 'integer' } }, required: ['id'] };
const route = { schema, method: 'GET', url: '/x', httpStatus: '200' };

describe('lazy response serializers', () => {
  it('compile nothing until the first answer, then write what the eager serializer writes', () => {
    let compiled = 0;
    const counting: ReturnType<typeof SerializerSelector> = (external, options) => {
      const compile = SerializerSelector()(external, options);
      return (definition) => {
        compiled++;
        return compile(definition);
      };
    };
    // The factory under test wraps whatever SerializerSelector() gives; count through a spy of it.
    const lazy = lazySerializerFactory(counting)(undefined, {})(route);
    expect(compiled).toBe(0);
    const document = { id: 'a', count: 2, secret: 'not in the schema' };
    const eager = SerializerSelector()(undefined, {})(route);
    expect(lazy(document)).toBe(eager(document));
    expect(lazy(document)).toBe('{"id":"a","count":2}');
    expect(lazy({ id: 'b' })).toBe('{"id":"b"}');
    expect(compiled).toBe(1);
  });
});
