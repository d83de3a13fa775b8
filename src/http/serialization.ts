import fastJsonStringify from "fast-json-stringify";
import type { FastifySerializerCompiler } from "fastify";

// Response serializers, compiled once per schema in a process whichever app asks for them: Fastify's
// own compiler would compile every route's response schemas again for each app a process builds
// (about 150 ms of CPU an app; the test suite builds hundreds). The schemas are module constants and
// no app passes serializer options or shared schemas of its own, so the function compiled for one app
// is the one the next would compile: the same fast-json-stringify call Fastify makes by default.
//
// Keyed by the schema's text, not its object: Fastify hands the compiler copies of a route's schemas
// (a new object each app), so an object key never matched and every app compiled them all again.
const compiled = new Map<string, (data: unknown) => string>();

export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  const key = JSON.stringify(schema);
  let serialize = compiled.get(key);
  if (serialize === undefined) {
    serialize = fastJsonStringify(schema);
    compiled.set(key, serialize);
  }
  return serialize;
};
