import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { uniqueName } from "../../test/factories.ts";
import { anonymous, forEachBackend } from "../../test/harness.ts";

// A workflow's severity (what Novu's inbox shows, filters and counts by), through the workflow API.

forEachBackend("workflows: severity", (ctx) => {
  test("none unless given; high, medium or low through POST and PUT; shown by GET and the list", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const create = (body: Record<string, unknown>) =>
      api.post("/v1/workflows", {
        name: uniqueName("Severity"),
        notificationGroupId: dev.generalGroupId,
        ...body,
      });

    const plain = await create({});
    assert.equal(plain.statusCode, 201, plain.body);
    assert.equal(plain.json().data.severity, "none");
    const high = await create({ severity: "high" });
    assert.equal(high.json().data.severity, "high");
    const id = high.json().data._id as string;

    const changed = await api.put(`/v1/workflows/${id}`, { severity: "low" });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json().data.severity, "low");
    // A PUT without it keeps it.
    assert.equal((await api.put(`/v1/workflows/${id}`, { description: "x" })).json().data.severity, "low");
    assert.equal((await api.get(`/v1/workflows/${id}`)).json().data.severity, "low");
    const listed = (await api.get("/v1/workflows")).json().data as { _id: string; severity: string }[];
    assert.deepEqual(
      listed.map((w) => [w._id, w.severity]).sort(),
      [
        [id, "low"],
        [plain.json().data._id, "none"],
      ].sort(),
    );
    assert.equal((await api.put(`/v1/workflows/${id}`, { severity: "none" })).json().data.severity, "none");

    for (const severity of ["critical", "HIGH", "", 3, null]) {
      assertErrorBody(await create({ severity }), 400, { path: "/v1/workflows", fields: ["severity"] });
      assertErrorBody(await api.put(`/v1/workflows/${id}`, { severity }), 400, {
        path: `/v1/workflows/${id}`,
        fields: ["severity"],
      });
    }
  });

  test("the OpenAPI document gives its values on the workflow and on both bodies", async () => {
    const doc = (await anonymous(ctx).get("/openapi.json")).json();
    const values = ["high", "medium", "low", "none"];
    const schemaOf = (path: string, method: string) =>
      doc.paths[path][method].requestBody.content["application/json"].schema.properties.severity;
    assert.deepEqual(schemaOf("/v1/workflows", "post").enum, values);
    assert.deepEqual(schemaOf("/v1/workflows/{workflowId}", "put").enum, values);
    const response =
      doc.paths["/v1/workflows/{workflowId}"].get.responses["200"].content["application/json"].schema;
    const workflow = response.properties?.data ?? response;
    const resolved = workflow.$ref
      ? doc.components.schemas[String(workflow.$ref).split("/").at(-1) as string]
      : workflow;
    assert.deepEqual(resolved.properties.severity.enum, values);
    assert.ok(resolved.required.includes("severity"));
  });
});
