import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "./error-body.ts";
import { forEachBackend } from "./harness.ts";

// Novu's /v1/organizations over Tidings' organizations: the key's own (list, me, rename,
// branding), its one member (the owner), and a new organization, reached by the keys it answers with.

forEachBackend("organizations", (ctx) => {
  test("list and me: the key's organization; rename; branding set field by field and checked; members: the owner", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const orgId = (await api.get("/v1/environments/me")).json().data._organizationId;

    const me = await api.get("/v1/organizations/me");
    assert.equal(me.statusCode, 200, me.body);
    const organization = me.json().data;
    assert.equal(organization._id, orgId);
    assert.deepEqual(organization.branding, {});
    assert.deepEqual(organization.partnerConfigurations, []);
    assert.deepEqual((await api.get("/v1/organizations")).json().data, [organization]);
    // Production's key is of the same organization.
    assert.equal((await ctx.client(prod.apiKey).get("/v1/organizations/me")).json().data._id, orgId);

    const renamed = await api.patch("/v1/organizations", { name: "  Acme Corp " });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual(renamed.json().data, { name: "Acme Corp" });
    assert.equal((await api.get("/v1/organizations/me")).json().data.name, "Acme Corp");
    for (const body of [{}, { name: "" }, { name: "   " }]) {
      const res = await api.patch("/v1/organizations", body);
      assertErrorBody(res, 400, { path: "/v1/organizations", fields: ["name"] });
    }

    const full = {
      color: "#fefefe",
      fontColor: "#f4f4f4",
      contentBackground: "#fefefe",
      fontFamily: "Nunito",
      logo: "https://s3.us-east-1.amazonaws.com/bucket/2/1/3.png",
    };
    const branded = await api.put("/v1/organizations/branding", full);
    assert.equal(branded.statusCode, 200, branded.body);
    assert.deepEqual(branded.json().data, full);
    const after = (await api.get("/v1/organizations/me")).json().data;
    assert.deepEqual([after.branding, after.logo, after.name], [full, full.logo, "Acme Corp"]);
    for (const extension of ["jpg", "jpeg", "gif", "svg"]) {
      const logo = `https://s3.us-east-1.amazonaws.com/bucket/logo.${extension}`;
      const res = await api.put("/v1/organizations/branding", { logo });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data, { ...full, logo }, "the other fields stay");
    }
    for (const body of [
      { logo: "http://s3.us-east-1.amazonaws.com/bucket/2/1/3.png" },
      { logo: "https://s3.us-east-1.amazonaws.com/bucket/2/1/3.exe" },
      { logo: "https://s3.us-east-1.amazonaws.com/bucket/2/1/3.zip" },
      { logo: "not a url" },
      { color: "red" },
      { fontColor: "#12345" },
      { contentBackground: 5 },
    ]) {
      const res = await api.put("/v1/organizations/branding", body);
      assertErrorBody(res, 400, { path: "/v1/organizations/branding", fields: Object.keys(body) });
    }

    const members = await api.get("/v1/organizations/members");
    assert.equal(members.statusCode, 200, members.body);
    const [owner, ...others] = members.json().data;
    assert.equal(others.length, 0);
    assert.deepEqual([owner._organizationId, owner.roles, owner.memberStatus], [orgId, ["admin"], "active"]);
    const role = await api.put(`/v1/organizations/members/${owner._id}/roles`, { role: "admin" });
    assert.equal(role.statusCode, 200, role.body);
    assert.deepEqual(role.json().data, owner);
    assertErrorBody(await api.put(`/v1/organizations/members/${owner._id}/roles`, { role: "member" }), 400, {
      path: `/v1/organizations/members/${owner._id}/roles`,
      fields: ["role"],
    });
    assertErrorBody(await api.delete(`/v1/organizations/members/${owner._id}`), 409, {
      path: `/v1/organizations/members/${owner._id}`,
    });
    assertErrorBody(await api.delete("/v1/organizations/members/someone-else"), 404, {
      path: "/v1/organizations/members/someone-else",
      message: /^Member someone-else was not found$/,
    });
  });

  test("create: a new organization with its environments and their keys, which reach it and only it", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    assertErrorBody(await api.post("/v1/organizations", {}), 400, {
      path: "/v1/organizations",
      fields: ["name"],
    });
    const res = await api.post("/v1/organizations", {
      name: "Globex",
      logo: "https://cdn.example.com/globex.svg",
      jobTitle: "engineer",
      domain: "globex.example",
      productUseCases: { in_app: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json().data;
    assert.equal(created.name, "Globex");
    assert.deepEqual(created.branding, { logo: "https://cdn.example.com/globex.svg" });
    assert.deepEqual(
      created.environments.map((e: { name: string }) => e.name),
      ["Development", "Production"],
    );
    const newKey = created.environments[0].apiKey;
    const theirs = ctx.client(newKey);
    assert.equal((await theirs.get("/v1/organizations/me")).json().data._id, created._id);
    assert.notEqual((await api.get("/v1/organizations/me")).json().data._id, created._id);
    assert.equal((await theirs.get("/v1/organizations")).json().data.length, 1);
    assert.equal((await theirs.get("/v1/notification-groups")).json().data[0].name, "General");
  });
});
