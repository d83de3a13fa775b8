import fastJsonStringify from "fast-json-stringify";
import type { FastifySerializerCompiler } from "fastify";
import { pendingCompiles } from "./validation.ts";

// Response serializers, one per schema in a process whichever app asks for them, each compiled on
// its first use. Fastify's own compiler would compile every route's response schemas again for each
// app a process builds (the test suite builds hundreds) and all of them at each start (a process
// serves few of them). The schemas are module constants and no app passes serializer options or
// shared schemas of its own, so the function compiled for one app is the one the next would
// compile: the same fast-json-stringify call Fastify makes by default.
//
// Keyed by the schema's text, not its object: Fastify hands the compiler copies of a route's schemas
// (a new object each app), so an object key would never match.
const serializers = new Map<string, (data: unknown) => string>();

function lazySerializer(schema: object): (data: unknown) => string {
  let compiled: ((data: unknown) => string) | undefined;
  pendingCompiles.add(() => {
    compiled ??= fastJsonStringify(schema);
  });
  return (data) => {
    compiled ??= fastJsonStringify(schema);
    return compiled(data);
  };
}

export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  const key = JSON.stringify(schema);
  let serialize = serializers.get(key);
  if (serialize === undefined) {
    serialize = lazySerializer(schema);
    serializers.set(key, serialize);
  }
  return serialize;
};
