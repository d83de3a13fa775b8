import assert from "node:assert/strict";
import { test } from "node:test";
import { parseQueryString } from "./query-string.ts";

test("key[] is read as the array key, as axios writes it and Novu reads it", () => {
  assert.deepEqual(
    { ...parseQueryString("transactionId%5B%5D=a&transactionId%5B%5D=b&page=1") },
    {
      transactionId: ["a", "b"],
      page: "1",
    },
  );
  assert.deepEqual({ ...parseQueryString("ids[]=only") }, { ids: ["only"] });
  assert.deepEqual({ ...parseQueryString("ids=a&ids[]=b") }, { ids: ["a", "b"] });
});

test("everything else reads as before: repeats are arrays, other brackets stay keys", () => {
  assert.deepEqual({ ...parseQueryString("a=1&a=2&b=x+y&c=%ZZ") }, { a: ["1", "2"], b: "x y", c: "%ZZ" });
  assert.deepEqual({ ...parseQueryString("a[0]=1&a[b]=2&[]=3") }, { "a[0]": "1", "a[b]": "2", "[]": "3" });
  const hostile = parseQueryString("__proto__=x&constructor[]=y");
  assert.equal(Object.getPrototypeOf(hostile), null);
  assert.deepEqual(Object.entries(hostile)[0], ["__proto__", "x"], "a plain key");
  assert.deepEqual(hostile.constructor, ["y"]);
  assert.deepEqual({ ...parseQueryString("") }, {});
});
