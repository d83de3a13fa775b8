import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { sql } from "kysely";
import { assertErrorBody } from "../../test/error-body.ts";
import { forEachBackend } from "../../test/harness.ts";
import { OBJECT_ID } from "../../test/patterns.ts";
import { startSmtpSink } from "../../test/sinks.ts";
import { buildApp } from "../app.ts";

const PASSWORD = "Plaintext-Pa55word-9f3a1c";
const smtp = (more: Record<string, unknown> = {}) => ({
  host: "smtp.example.com",
  port: "587",
  secure: false,
  user: "mailer",
  password: PASSWORD,
  from: "team@example.com",
  senderName: "Tidings Team",
  ...more,
});

forEachBackend("integrations: configure providers through /v1/integrations", (ctx) => {
  async function setup() {
    const tenant = await ctx.tenant();
    return { tenant, api: ctx.client(tenant.dev.apiKey), other: ctx.client(tenant.prod.apiKey) };
  }

  test("create an SMTP integration: 201, Novu's shape, the password masked, everything else as sent", async () => {
    const { tenant, api } = await setup();
    const res = await api.post("/v1/integrations", {
      providerId: "nodemailer",
      channel: "email",
      credentials: smtp(),
      active: true,
      name: "Our SMTP",
    });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.match(data._id, OBJECT_ID);
    assert.equal(data._environmentId, tenant.dev.environmentId);
    assert.equal(data._organizationId, tenant.organizationId);
    assert.equal(data.providerId, "nodemailer");
    assert.equal(data.channel, "email");
    assert.equal(data.name, "Our SMTP");
    assert.match(data.identifier, /^our-smtp-[0-9a-f]{8}$/);
    assert.equal(data.active, true);
    assert.equal(data.primary, false);
    assert.equal(data.deleted, false);
    assert.deepEqual(data.credentials, { ...smtp(), password: "********" });
    assert.ok(!res.body.includes(PASSWORD));
  });

  test("defaults: inactive, named after the provider, a generated identifier; chat needs no credentials", async () => {
    const { api } = await setup();
    const res = await api.post("/v1/integrations", { providerId: "slack", channel: "chat" });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.active, false);
    assert.equal(data.name, "Slack");
    assert.match(data.identifier, /^slack-[0-9a-f]{8}$/);
    assert.deepEqual(data.credentials, {});
  });

  test("list, active, update, set-primary, webhook status, delete", async () => {
    const { api } = await setup();
    const email = (
      await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtp(),
        active: true,
        identifier: "smtp-one",
      })
    ).json().data;
    const chat = (
      await api.post("/v1/integrations", { providerId: "discord", channel: "chat", active: false })
    ).json().data;

    const all = await api.get("/v1/integrations");
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(
      all.json().data.map((i: { _id: string }) => i._id),
      [email._id, chat._id],
    );
    assert.ok(!all.body.includes(PASSWORD));
    const active = await api.get("/v1/integrations/active");
    assert.deepEqual(
      active.json().data.map((i: { _id: string }) => i._id),
      [email._id],
    );

    // The mask sent back keeps the stored password; other fields (the server's aside) change.
    const updated = await api.put(`/v1/integrations/${email._id}`, {
      credentials: { ...smtp(), password: "********", senderName: "The Team", port: 587 },
      name: "Renamed",
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().data.name, "Renamed");
    assert.equal(updated.json().data.credentials.senderName, "The Team");
    assert.equal(updated.json().data.credentials.password, "********");
    const stored = await ctx.store.db
      .selectFrom("integrations")
      .select("credentials")
      .where("id", "=", email._id)
      .executeTakeFirstOrThrow();
    assert.ok(stored.credentials.startsWith("v1."), "sealed");

    const primary = await api.post(`/v1/integrations/${email._id}/set-primary`, {});
    assert.equal(primary.statusCode, 200, primary.body);
    assert.equal(primary.json().data.primary, true);
    assert.equal(primary.json().data.priority, 1);
    const notEmail = await api.post(`/v1/integrations/${chat._id}/set-primary`, {});
    assertErrorBody(notEmail, 400, {
      path: `/v1/integrations/${chat._id}/set-primary`,
      message: /Only email integrations have a primary/,
    });

    const status = await api.get("/v1/integrations/webhook/provider/nodemailer/status");
    assert.equal(status.statusCode, 200, status.body);
    assert.deepEqual(status.json(), { data: false });
    assertErrorBody(await api.get("/v1/integrations/webhook/provider/mattermost/status"), 404, {
      path: "/v1/integrations/webhook/provider/mattermost/status",
      message: /^No integration of provider mattermost was found$/,
    });

    const removed = await api.delete(`/v1/integrations/${email._id}`);
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(
      removed.json().data.map((i: { _id: string }) => i._id),
      [chat._id],
    );
    assertErrorBody(await api.delete(`/v1/integrations/${email._id}`), 404, {
      path: `/v1/integrations/${email._id}`,
      message: new RegExp(`^Integration ${email._id} was not found$`),
    });
  });

  test("another environment's integration is not there (404), and its lists are its own", async () => {
    const { api, other } = await setup();
    const created = (await api.post("/v1/integrations", { providerId: "slack", channel: "chat" })).json()
      .data;
    for (const res of [
      await other.put(`/v1/integrations/${created._id}`, { name: "x" }),
      await other.delete(`/v1/integrations/${created._id}`),
      await other.post(`/v1/integrations/${created._id}/set-primary`, {}),
    ]) {
      assert.equal(res.statusCode, 404, res.body);
    }
    assert.deepEqual((await other.get("/v1/integrations")).json(), { data: [] });
  });

  test("bad input: 400 in the one error body, naming the field", async () => {
    const { tenant, api } = await setup();
    const cases: [Record<string, unknown>, RegExp, string[]][] = [
      [
        { providerId: "sendgrid", channel: "email" },
        /^providerId must be one of nodemailer, slack/,
        ["providerId"],
      ],
      [
        { providerId: "slack", channel: "email" },
        /^channel must be chat for the slack provider$/,
        ["channel"],
      ],
      [
        {
          providerId: "nodemailer",
          channel: "email",
          active: true,
          credentials: { port: "25", from: "a@b.c" },
        },
        /^credentials\.host is required for an active nodemailer integration$/,
        ["credentials.host"],
      ],
      [
        { providerId: "nodemailer", channel: "email", credentials: { port: "99999" } },
        /^credentials\.port must be a port number/,
        ["credentials.port"],
      ],
      [
        { providerId: "nodemailer", channel: "email", credentials: { from: "not an address" } },
        /^credentials\.from must be an email address$/,
        ["credentials.from"],
      ],
      [
        { providerId: "slack", channel: "chat", credentials: { nope: 1 } },
        /credentials/,
        ["credentials.nope"],
      ],
      [{ providerId: "slack", channel: "chat", active: "yes" }, /active/, ["active"]],
      [{ channel: "chat" }, /providerId/, ["providerId"]],
      [
        { providerId: "slack", channel: "chat", _environmentId: tenant.prod.environmentId },
        /^_environmentId must be the environment of the API key$/,
        ["_environmentId"],
      ],
    ];
    for (const [body, message, fields] of cases) {
      const res = await api.post("/v1/integrations", body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assertErrorBody(res, 400, { path: "/v1/integrations", message, fields });
    }
    assertErrorBody(await api.put("/v1/integrations/not-an-id", { name: "x" }), 400, {
      path: "/v1/integrations/not-an-id",
      fields: ["integrationId"],
    });
  });

  test("an identifier is unique in the environment: 409", async () => {
    const { api } = await setup();
    const body = { providerId: "slack", channel: "chat", identifier: "team-slack" };
    assert.equal((await api.post("/v1/integrations", body)).statusCode, 201);
    assertErrorBody(await api.post("/v1/integrations", body), 409, {
      path: "/v1/integrations",
      message: /^Integration with identifier already exists$/,
    });
    const second = (await api.post("/v1/integrations", { ...body, identifier: "other" })).json().data;
    assertErrorBody(await api.put(`/v1/integrations/${second._id}`, { identifier: "team-slack" }), 409, {
      path: `/v1/integrations/${second._id}`,
    });
  });

  test("check: true connects to the SMTP server first: 201 when it answers, 400 when it does not", async () => {
    const { api } = await setup();
    const sink = await startSmtpSink();
    try {
      const credentials = { host: "127.0.0.1", port: sink.port, from: "team@example.com", ignoreTls: true };
      const ok = await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        credentials,
        check: true,
      });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.ok(sink.connections >= 1, "the check connected");
    } finally {
      await sink.close();
    }
    const down = await startSmtpSink();
    await down.close();
    const res = await api.post("/v1/integrations", {
      providerId: "nodemailer",
      channel: "email",
      credentials: { host: "127.0.0.1", port: down.port, from: "team@example.com" },
      check: true,
    });
    assertErrorBody(res, 400, { path: "/v1/integrations", message: /^The SMTP check failed: SMTP: / });
  });

  test("a new host, port, user or TLS setting needs the password again: masked or left out is a 400, and no AUTH reaches the new server", async () => {
    const { api } = await setup();
    // The server someone would point the integration at: it offers AUTH and records every attempt.
    const sink = await startSmtpSink({ login: { user: "mailer", password: "Their-0wn-Pa55" } });
    try {
      const created = await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtp(),
        active: true,
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data._id;
      const path = `/v1/integrations/${id}`;
      const elsewhere = { host: "127.0.0.1", port: String(sink.port), ignoreTls: true };
      const changes: [Record<string, unknown>, string][] = [
        [elsewhere, "credentials.host, credentials.port, credentials.ignoreTls change"],
        [{ host: "SMTP.other.example" }, "credentials.host changes"],
        [{ port: 2525 }, "credentials.port changes"],
        [{ user: "someone-else" }, "credentials.user changes"],
        [{ secure: true }, "credentials.secure changes"],
        [{ requireTls: true }, "credentials.requireTls changes"],
        [{ ignoreTls: true }, "credentials.ignoreTls changes"],
      ];
      const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      for (const [change, what] of changes) {
        for (const password of ["********", undefined]) {
          const credentials: Record<string, unknown> = { ...smtp(), ...change, password };
          if (password === undefined) delete credentials.password;
          const how = password ? "masked" : "left out";
          for (const check of [true, false]) {
            assertErrorBody(await api.put(path, { credentials, check }), 400, {
              path,
              message: new RegExp(
                `^${literal(`credentials.password must be sent again (not ${how}) when ${what}:`)} a stored secret`,
              ),
              fields: ["credentials.password"],
            });
          }
        }
      }
      assert.deepEqual(sink.auths, [], "no login reached the new server");
      assert.equal(sink.connections, 0, "nothing connected to the new server");
      // Nothing changed: the integration still points where it did, with its password.
      const listed = (await api.get("/v1/integrations")).json().data[0];
      assert.equal(listed.credentials.host, "smtp.example.com");
      assert.equal(listed.credentials.password, "********");
      // A change that leaves the server alone keeps the masked password, as before.
      const renamed = await api.put(path, {
        credentials: { ...smtp(), password: "********", from: "x@example.com" },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
      // With the new server's own password sent, the change is made, and only that password is used there.
      const moved = await api.put(path, {
        credentials: { ...smtp(), ...elsewhere, password: "Their-0wn-Pa55" },
        check: true,
      });
      assert.equal(moved.statusCode, 200, moved.body);
      assert.deepEqual(sink.auths, [{ username: "mailer", password: "Their-0wn-Pa55" }]);
    } finally {
      await sink.close();
    }
  });

  test("credentials are encrypted at rest: the plaintext is nowhere in the database", async () => {
    const { api } = await setup();
    const created = await api.post("/v1/integrations", {
      providerId: "nodemailer",
      channel: "email",
      credentials: smtp(),
      active: true,
    });
    assert.equal(created.statusCode, 201, created.body);
    await api.put(`/v1/integrations/${created.json().data._id}`, {
      credentials: smtp({ host: "changed.example" }),
    });
    if (ctx.backend === "sqlite") {
      const { rows } = await sql<{
        file: string;
      }>`select file from pragma_database_list where name = 'main'`.execute(ctx.store.db);
      const file = rows[0]?.file ?? "";
      assert.ok(fs.existsSync(file), file);
      const files = [file, `${file}-wal`].filter((path) => fs.existsSync(path));
      const bytes = Buffer.concat(files.map((path) => fs.readFileSync(path)));
      // The search reads the integration's rows: its id is there in the clear.
      assert.notEqual(bytes.indexOf(created.json().data._id), -1, "the row is in the files read");
      assert.equal(bytes.indexOf(PASSWORD), -1, "the files hold the password");
      assert.equal(bytes.indexOf("smtp.example.com"), -1, "the files hold the host");
    } else {
      const { rows } = await sql<{ row: string }>`select t::text as row from integrations t`.execute(
        ctx.store.db,
      );
      assert.ok(rows.length > 0);
      for (const { row } of rows) assert.ok(!row.includes(PASSWORD), row);
      const keys = await sql<{ row: string }>`select t::text as row from idempotency_keys t`.execute(
        ctx.store.db,
      );
      for (const { row } of keys.rows) assert.ok(!row.includes(PASSWORD), row);
    }
  });

  test("an app built without a key answers 503 in the one error body", async () => {
    const { tenant, api } = await setup();
    assert.equal(
      (await api.post("/v1/integrations", { providerId: "slack", channel: "chat" })).statusCode,
      201,
    );
    const bare = await buildApp({ store: ctx.store, runWorker: false });
    try {
      const res = await bare.inject({
        method: "GET",
        url: "/v1/integrations",
        headers: { authorization: `ApiKey ${tenant.dev.apiKey}` },
      });
      assertErrorBody(res, 503, { path: "/v1/integrations" });
    } finally {
      await bare.close();
    }
  });
});
