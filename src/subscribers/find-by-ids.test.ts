import assert from "node:assert/strict";
import { test } from "node:test";
import { createSubscriber } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";
import { findSubscribersByIds } from "./repository.ts";

// A page of a fan-out reads its subscribers by our ids. The read goes by id alone (the primary key;
// with the environment beside it SQLite walked the environment's index), and the environment is
// checked on each row: an id of another environment finds nothing.
forEachBackend("subscribers by our ids", (ctx) => {
  test("finds the environment's subscribers by id and none of another environment's, by id", async () => {
    const { dev, prod } = await ctx.tenant();
    const mine = await createSubscriber(ctx, dev.apiKey, { subscriberId: "mine" });
    const theirs = await createSubscriber(ctx, prod.apiKey, { subscriberId: "theirs" });
    for (const hold of [false, true]) {
      const found = await findSubscribersByIds(
        ctx.store.db,
        dev.environmentId,
        [mine._id, theirs._id, mine._id],
        {
          hold,
        },
      );
      assert.deepEqual([...found.keys()], [mine._id]);
      assert.equal(found.get(mine._id)?.subscriberId, "mine");
    }
  });
});
