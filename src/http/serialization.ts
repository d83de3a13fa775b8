import fastJsonStringify from "fast-json-stringify";
import type { FastifySerializerCompiler } from "fastify";

// Response serializers, compiled once per schema in a process whichever app asks for them: Fastify's
// own compiler would compile every route's response schemas again for each app a process builds
// (about 150 ms of CPU an app; the test suite builds hundreds). The schemas are module constants and
// no app passes serializer options or shared schemas of its own, so the function compiled for one app
// is the one the next would compile: the same fast-json-stringify call Fastify makes by default.
const compiled = new WeakMap<object, (data: unknown) => string>();

export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  let serialize = compiled.get(schema);
  if (serialize === undefined) {
    serialize = fastJsonStringify(schema);
    compiled.set(schema, serialize);
  }
  return serialize;
};
