/**
 * Fastify's own response serializers (fast-json-stringify, from each route's response schemas),
 * compiled the first time a route answers with that status instead of when the app starts.
 *
 * Why: compiling the serializers of every route and status (~60 schemas, with those of the docs
 * routes) is ~65 ms of the start, and ~300 ms under a profiler, on the main thread, which is on
 * the critical path to ready at 1,000 projects (SPEC §9: ready in 3 s). Most of them (error
 * statuses, the docs, the admin routes) are rarely or never used in a process's life. The first
 * answer of a kind pays its compilation once (a few ms); the output is the same serializer's.
 * `POST /decide` does not go through these: its text comes serialized from the service.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/** Fastify's default serializer factory (or `eager`), made lazy per route and status. */
export function lazySerializerFactory(eager: SerializerFactory = SerializerSelector()): SerializerFactory {
  return (externalSchemas, options) => {
    const compile = eager(externalSchemas, options);
    return (route) => {
      let serialize: ((document: unknown) => string) | undefined;
      return (document) => (serialize ??= compile(route))(document);
    };
  };
}
