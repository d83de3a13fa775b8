// Inbox sessions need no API key, only the environment's public application identifier: the
// subscribers they create are capped per environment (SESSION_NEW_SUBSCRIBERS_PER_MINUTE), both
// session routes (Novu's current inbox and the older widget) drawing from one bucket.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { forEachBackend, type TestContext, testConfig } from "../../test/harness.ts";
import { ManualClock } from "../clock.ts";

const hexId = () => randomBytes(12).toString("hex");

function startSession(
  ctx: TestContext,
  route: "inbox" | "widget",
  applicationIdentifier: string,
  id: string,
) {
  return ctx.app.inject(
    route === "inbox"
      ? {
          method: "POST",
          url: "/v1/inbox/session",
          payload: { applicationIdentifier, subscriber: { subscriberId: id } },
        }
      : {
          method: "POST",
          url: "/v1/widgets/session/initialize",
          payload: { applicationIdentifier, subscriberId: id },
        },
  );
}

forEachBackend<ManualClock>(
  "new subscribers from inbox sessions, capped per environment",
  (ctx) => {
    test("past the cap a session that would create a subscriber gets a 429 with Retry-After; existing subscribers still start sessions; the next minute opens again", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const applicationIdentifier = (await api.get("/v1/environments/me")).json().data.identifier as string;
      const made = [hexId(), hexId(), hexId()];
      for (const [i, id] of made.entries()) {
        const res = await startSession(ctx, i % 2 === 0 ? "inbox" : "widget", applicationIdentifier, id);
        assert.equal(res.statusCode, 201, res.body);
      }
      const refused = hexId();
      for (const route of ["inbox", "widget"] as const) {
        const res = await startSession(ctx, route, applicationIdentifier, refused);
        assertErrorBody(res, 429, {
          path: route === "inbox" ? "/v1/inbox/session" : "/v1/widgets/session/initialize",
          message: /Too many new subscribers from inbox sessions/,
        });
        assert.ok(Number(res.headers["retry-after"]) >= 1, JSON.stringify(res.headers));
      }
      assert.equal((await api.get(`/v1/subscribers/${refused}`)).statusCode, 404, "nothing was created");
      // A subscriber that exists takes no token: its sessions go on.
      for (const id of made)
        assert.equal((await startSession(ctx, "inbox", applicationIdentifier, id)).statusCode, 201);
      // So do subscribers the API key creates, and another environment's sessions.
      const byKey = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId: byKey })).statusCode, 201);
      assert.equal((await startSession(ctx, "widget", applicationIdentifier, byKey)).statusCode, 201);
      const other = await ctx.tenant();
      const otherIdentifier = (await ctx.client(other.dev.apiKey).get("/v1/environments/me")).json().data
        .identifier as string;
      assert.equal((await startSession(ctx, "inbox", otherIdentifier, hexId())).statusCode, 201);
      // A minute later (the app's clock) the bucket has refilled.
      ctx.clock.advance(60_000);
      const res = await startSession(ctx, "inbox", applicationIdentifier, refused);
      assert.equal(res.statusCode, 201, res.body);
    });
  },
  {
    clock: () => new ManualClock(),
    app: () => ({ config: testConfig({ SESSION_NEW_SUBSCRIBERS_PER_MINUTE: "3" }) }),
  },
);
