// From Development to Production, driven by Novu's own clients on both backends: @novu/api 3.19's
// `environments` (list, create, update, delete, getTags, diff, publish) and `workflows.sync`, and
// @novu/node's v1 change list. A workflow reaches Production only by a publish; a trigger with the
// Production key runs the version published last; a publish lands whole or not at all.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { Novu } from "@novu/api";
import { Novu as LegacyNovu } from "@novu/node";
import { createGroup, createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";

forEachBackend("promotion: @novu/api's environments, diff and publish; Novu's v1 changes", (ctx) => {
  let serverURL = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    serverURL = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });
  const sdk = (secretKey: string) => new Novu({ secretKey, serverURL });

  /** The SDK's error for a refused call: its status and our message. */
  const refused = async (call: Promise<unknown>, status: number, message: RegExp) =>
    assert.rejects(call, (error: Error & { statusCode?: number; body?: string }) => {
      assert.equal(error.statusCode, status, error.body ?? error.message);
      assert.match(JSON.parse(error.body ?? "{}").message, message);
      return true;
    });

  /** The in-app contents a subscriber of the environment has, newest first. */
  const feed = async (apiKey: string, subscriberId: string) => {
    const res = await ctx.client(apiKey).get(`/v1/subscribers/${subscriberId}/notifications/feed?limit=50`);
    return res.statusCode === 404 ? [] : (res.json().data as { content: string }[]).map((m) => m.content);
  };

  /** Triggers with the key and waits for the message: what that environment runs now. */
  const runs = async (apiKey: string, workflowId: string, n: number): Promise<string> => {
    const subscriberId = `sub-${n}-${Date.now()}`;
    await sdk(apiKey).trigger({ workflowId, to: { subscriberId, firstName: "Ada" }, payload: { n } });
    const [content] = await poll(
      () => feed(apiKey, subscriberId),
      (c) => c.length === 1,
      {
        what: `the message of trigger ${n}`,
      },
    );
    return content as string;
  };

  const production = (tenant: TestTenant) => ctx.client(tenant.prod.apiKey);

  test("create in Development → diff → publish → Production runs it; change → diff → Production runs the old one until published; delete → publish removes it", async () => {
    const tenant = await ctx.tenant();
    const dev = sdk(tenant.dev.apiKey);
    const target = tenant.prod.environmentId;
    const workflowId = `promoted-${Date.now()}`;

    const made = (
      await dev.workflows.create({
        name: "Promoted",
        workflowId,
        active: true,
        tags: ["launch"],
        steps: [{ name: "Bell", type: "in_app", controlValues: { body: "first {{n}}" } }],
      })
    ).result;
    // Nothing reaches Production unpublished.
    const before = await production(tenant).post("/v1/events/trigger", { name: workflowId, to: "nobody" });
    assert.equal(before.statusCode, 422, before.body);
    assert.equal((await production(tenant).get(`/v1/workflows/${workflowId}`)).statusCode, 404);

    const added = (await dev.environments.diff({}, target)).result;
    assert.equal(added.sourceEnvironmentId, tenant.dev.environmentId);
    assert.equal(added.targetEnvironmentId, target);
    assert.equal(added.summary.hasChanges, true);
    assert.deepEqual(
      added.resources.map((r) => [r.resourceType, r.sourceResource?.id, r.summary.added]),
      [["REGULAR", made.id, 1]],
    );
    assert.equal(added.resources[0]?.changes[0]?.action, "added");

    const published = (await dev.environments.publish({}, target)).result;
    assert.deepEqual(
      published.results[0]?.successful.map((s) => [s.resourceId, s.action]),
      [[made.id, "created"]],
    );
    // The workflow, and Development's default layout of onboarding, which Production had not yet.
    assert.deepEqual(published.summary, { resources: 2, successful: 2, failed: 0, skipped: 0 });
    // The copy: its own _id, its source in _parentId, in Production's General group.
    const copy = (await production(tenant).get(`/v1/workflows/${workflowId}`)).json().data;
    assert.match(copy._id, OBJECT_ID);
    assert.notEqual(copy._id, made.id);
    assert.equal(copy._parentId, made.id);
    assert.equal(copy._environmentId, target);
    assert.equal(copy._notificationGroupId, tenant.prod.generalGroupId);
    assert.equal((await dev.workflows.get(workflowId, target)).result.id, copy._id, "get with environmentId");
    assert.deepEqual((await dev.environments.getTags(target)).result, [{ name: "launch" }]);
    assert.equal((await dev.environments.diff({}, target)).result.summary.hasChanges, false);
    assert.equal(await runs(tenant.prod.apiKey, workflowId, 1), "first 1");

    // A change in Development shows in the diff; Production keeps running what was published.
    await dev.workflows.update(
      {
        name: "Promoted",
        workflowId,
        active: true,
        tags: ["launch"],
        steps: [{ stepId: "bell", name: "Bell", type: "in_app", controlValues: { body: "second {{n}}" } }],
        preferences: {},
      },
      workflowId,
    );
    const modified = (await dev.environments.diff({}, target)).result;
    assert.deepEqual(
      modified.resources.map((r) => [r.sourceResource?.id, r.targetResource?.id, r.changes[0]?.action]),
      [[made.id, copy._id, "modified"]],
    );
    assert.deepEqual(Object.keys(modified.resources[0]?.changes[0]?.diffs?.new ?? {}), ["steps"]);
    assert.equal(await runs(tenant.dev.apiKey, workflowId, 2), "second 2");
    assert.equal(await runs(tenant.prod.apiKey, workflowId, 3), "first 3");
    await dev.environments.publish({}, target);
    assert.equal(await runs(tenant.prod.apiKey, workflowId, 4), "second 4");
    const rewritten = (await production(tenant).get(`/v1/workflows/${workflowId}`)).json().data;
    assert.equal(rewritten._id, copy._id, "the copy keeps its _id");

    // Deleted in Development: the diff says so, and the publish removes the copy.
    await dev.workflows.delete(workflowId);
    const deleted = (await dev.environments.diff({}, target)).result;
    assert.deepEqual(
      deleted.resources.map((r) => [r.sourceResource ?? null, r.targetResource?.id, r.changes[0]?.action]),
      [[null, copy._id, "deleted"]],
    );
    const removal = (await dev.environments.publish({}, target)).result;
    assert.deepEqual(
      removal.results[0]?.successful.map((s) => s.action),
      ["deleted"],
    );
    assert.equal((await production(tenant).get(`/v1/workflows/${workflowId}`)).statusCode, 404);
    const after = await production(tenant).post("/v1/events/trigger", { name: workflowId, to: "nobody" });
    assert.equal(after.statusCode, 422, after.body);
    await drain(ctx);
  });

  test("a publish that fails half-way (a unique index refuses a copy) leaves Production as it was; fixed, it lands whole", async () => {
    const tenant = await ctx.tenant();
    const dev = sdk(tenant.dev.apiKey);
    const prod = sdk(tenant.prod.apiKey);
    const target = tenant.prod.environmentId;
    const first = `first-${Date.now()}`;
    const clash = `clash-${Date.now()}`;
    await dev.workflows.create({
      name: "First",
      workflowId: first,
      active: true,
      steps: [{ name: "Bell", type: "in_app", controlValues: { body: "old" } }],
    });
    await dev.environments.publish({}, target);
    const published = (await production(tenant).get(`/v1/workflows/${first}`)).json().data;

    // Two changes: the first (older) workflow changed, then a new one whose identifier Production's
    // own workflow holds. The first is rewritten before the second's insert meets the unique index.
    await dev.workflows.patch({ description: "changed" }, first);
    await dev.workflows.create({ name: "Clash", workflowId: clash, steps: [] });
    const own = (await prod.workflows.create({ name: "Production's own", workflowId: clash, steps: [] }))
      .result;
    const pending = (await dev.environments.diff({}, target)).result;
    assert.deepEqual(
      pending.resources.map((r) => r.changes[0]?.action),
      ["modified", "added"],
    );

    await refused(
      dev.environments.publish({}, target),
      422,
      new RegExp(
        `^Nothing was published: workflow "Clash": its trigger identifier ${clash} is held in Production`,
      ),
    );
    // Production as it was: the first copy untouched, no copy of the second, its own workflow there.
    const unchanged = (await production(tenant).get(`/v1/workflows/${first}`)).json().data;
    assert.deepEqual(unchanged, published);
    const prodList = (await prod.workflows.list({ limit: 100 })).result;
    assert.deepEqual(
      prodList.workflows.map((w) => [w.workflowId, w.id]).sort(),
      [
        [clash, own.id],
        [first, published._id],
      ].sort(),
    );
    assert.deepEqual((await dev.environments.diff({}, target)).result.resources.length, 2);

    // Production's own workflow gone, the same publish lands whole.
    await prod.workflows.delete(own.id);
    const landed = (await dev.environments.publish({}, target)).result;
    assert.deepEqual(
      landed.results[0]?.successful.map((s) => s.action),
      ["updated", "created"],
    );
    assert.equal((await production(tenant).get(`/v1/workflows/${first}`)).json().data.description, "changed");
    assert.equal((await production(tenant).get(`/v1/workflows/${clash}`)).json().data._parentId !== "", true);
  });

  test("groups: a workflow's group goes with it, a rename follows, a group Production made itself blocks; dryRun and resources", async () => {
    const tenant = await ctx.tenant();
    const dev = sdk(tenant.dev.apiKey);
    const target = tenant.prod.environmentId;
    const billing = await createGroup(ctx, tenant.dev.apiKey, "Billing");
    const invoice = await createWorkflow(ctx, tenant.dev.apiKey, billing._id, {
      name: uniqueName("Invoice"),
    });
    const other = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Other"),
    });

    const diff = (await dev.environments.diff({}, target)).result;
    assert.equal(diff.resources.length, 2);
    // The groups beside the workflows: a field of ours, which the SDK's model leaves out.
    const raw = await ctx.client(tenant.dev.apiKey).post(`/v2/environments/${target}/diff`, {});
    const groups: { resourceId: string; action: string }[] = raw.json().data.notificationGroups;
    assert.deepEqual(
      groups.map((g) => [g.resourceId, g.action]),
      [[billing._id, "added"]],
    );

    // A dry run answers and writes nothing: two workflows, a group, and the default layout of onboarding.
    const dry = (await dev.environments.publish({ dryRun: true }, target)).result;
    assert.equal(dry.summary.resources, 4);
    assert.equal((await production(tenant).get(`/v1/workflows/${invoice._id}`)).statusCode, 404);
    assert.equal((await dev.environments.diff({}, target)).result.summary.totalChanges, 4);

    // One workflow only: it takes its group along; the other stays pending.
    const one = (
      await dev.environments.publish(
        { resources: [{ resourceType: "REGULAR", resourceId: invoice._id }] },
        target,
      )
    ).result;
    assert.deepEqual(
      one.results[0]?.successful.map((s) => s.resourceId),
      [invoice._id],
    );
    const copy = (await production(tenant).get(`/v1/workflows/${invoice.triggers[0].identifier}`)).json()
      .data;
    assert.equal(copy.notificationGroup.name, "Billing");
    assert.equal(copy.notificationGroup._parentId, billing._id);
    assert.deepEqual(
      (await dev.environments.diff({}, target)).result.resources.map((r) => r.sourceResource?.id),
      [other._id],
    );

    // A rename in Development follows on the next publish.
    await ctx.client(tenant.dev.apiKey).patch(`/v1/notification-groups/${billing._id}`, { name: "Invoices" });
    await dev.environments.publish({}, target);
    const renamed = (
      await production(tenant).get(`/v1/notification-groups/${copy._notificationGroupId}`)
    ).json().data;
    assert.equal(renamed.name, "Invoices");

    // A group of Development whose name Production's own group has: nothing is published.
    await createGroup(ctx, tenant.prod.apiKey, "Marketing");
    const marketing = await createGroup(ctx, tenant.dev.apiKey, "Marketing");
    await createWorkflow(ctx, tenant.dev.apiKey, marketing._id, { name: uniqueName("Promo") });
    await refused(dev.environments.publish({}, target), 422, /Production has a group named "Marketing"/);
    assert.equal((await dev.environments.diff({}, target)).result.resources.length, 1);
  });

  test("layouts: changes of their own (added, modified, deleted), chosen by id or pulled in by a workflow that names one, the default moving as one; a used or default copy is kept; a held identifier blocks; dryRun writes nothing", async () => {
    const tenant = await ctx.tenant();
    const devApi = ctx.client(tenant.dev.apiKey);
    const prodApi = production(tenant);
    const target = tenant.prod.environmentId;
    type LayoutDiff = {
      resourceType: string;
      resourceId: string;
      action: string;
      sourceResource: { id: string; name: string } | null;
      targetResource: { id: string } | null;
      changes: { resourceType: string; diffs: { previous: unknown; new: unknown } }[];
    };
    const diff = async () => {
      const res = await devApi.post(`/v2/environments/${target}/diff`, {});
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as {
        resources: { resourceId: string }[];
        layouts: LayoutDiff[];
        summary: { totalChanges: number };
      };
    };
    const publish = async (body: Record<string, unknown> = {}, status = 200) => {
      const res = await devApi.post(`/v2/environments/${target}/publish`, body);
      assert.equal(res.statusCode, status, res.body);
      return res.json();
    };
    const layoutsOf = async (api: typeof devApi) =>
      (await api.get("/v1/layouts?pageSize=100")).json().data as {
        _id: string;
        _parentId?: string;
        identifier: string;
        name: string;
        content: string;
        isDefault: boolean;
      }[];
    const makeLayout = async (api: typeof devApi, identifier: string, more: Record<string, unknown> = {}) => {
      const res = await api.post("/v1/layouts", {
        name: `Layout ${identifier}`,
        identifier,
        content: `<div class="${identifier}">{{{body}}}</div>`,
        ...more,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as { _id: string };
    };
    const emailStep = (layoutId?: string) => ({
      template: {
        type: "email",
        subject: "Hi",
        content: "<p>Hello</p>",
        ...(layoutId ? { _layoutId: layoutId } : {}),
      },
    });

    // A new organization: the default layout of onboarding is Development's one pending change.
    const [onboarded] = await layoutsOf(devApi);
    const first = await diff();
    assert.deepEqual(
      first.layouts.map((l) => [
        l.resourceType,
        l.resourceId,
        l.action,
        l.sourceResource?.name,
        l.targetResource,
      ]),
      [["layout", onboarded?._id, "added", "Default Layout", null]],
    );
    assert.equal(first.layouts[0]?.changes[0]?.resourceType, "layout");
    assert.deepEqual(first.layouts[0]?.changes[0]?.diffs, {
      previous: null,
      new: { name: "Default Layout", identifier: "novu-default-layout", isDefault: true },
    });
    assert.equal(first.summary.totalChanges, 1);

    // A workflow whose email step names a new layout pulls it in; one that names none does not.
    const brand = await makeLayout(devApi, "brand");
    const framed = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Framed"),
      steps: [emailStep(brand._id)],
    });
    const plain = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Plain"),
      steps: [emailStep()],
    });
    // A dry run answers what would be published and writes nothing.
    const dry = await publish({
      dryRun: true,
      resources: [{ resourceType: "REGULAR", resourceId: framed._id }],
    });
    assert.deepEqual(
      dry.data.layouts.successful.map((p: { resourceId: string; action: string }) => [
        p.resourceId,
        p.action,
      ]),
      [[brand._id, "created"]],
    );
    assert.equal(dry.data.layouts.resourceType, "layout");
    assert.equal(dry.data.dryRun, true);
    assert.deepEqual(await layoutsOf(prodApi), []);

    await publish({ resources: [{ resourceType: "REGULAR", resourceId: plain._id }] });
    assert.deepEqual(await layoutsOf(prodApi), [], "the plain workflow names no layout");
    const pulled = await publish({ resources: [{ resourceType: "REGULAR", resourceId: framed._id }] });
    assert.deepEqual(
      [pulled.data.results[0].successful.length, pulled.data.layouts.successful.length, pulled.data.summary],
      [1, 1, { resources: 2, successful: 2, failed: 0, skipped: 0 }],
    );
    const [brandCopy] = await layoutsOf(prodApi);
    assert.deepEqual(
      [brandCopy?.identifier, brandCopy?._parentId, brandCopy?.isDefault],
      ["brand", brand._id, false],
    );
    assert.deepEqual(
      (await diff()).layouts.map((l) => [l.resourceId, l.action]),
      [[onboarded?._id, "added"]],
    );

    // Modified: the fields that differ, with both sides; a layout is chosen by its id.
    const patched = await devApi.patch(`/v1/layouts/${brand._id}`, {
      name: "Brand frame",
      content: '<div class="brand-2">{{{body}}}</div>',
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const modified = (await diff()).layouts.find((l) => l.resourceId === brand._id);
    assert.equal(modified?.action, "modified");
    assert.equal(modified?.targetResource?.id, brandCopy?._id);
    assert.deepEqual(modified?.changes[0]?.diffs, {
      previous: { name: "Layout brand", content: '<div class="brand">{{{body}}}</div>' },
      new: { name: "Brand frame", content: '<div class="brand-2">{{{body}}}</div>' },
    });
    await publish({ resources: [{ resourceType: "layout", resourceId: brand._id }] });
    const rewritten = (await layoutsOf(prodApi))[0];
    assert.deepEqual(
      [rewritten?._id, rewritten?.name, rewritten?.content],
      [brandCopy?._id, "Brand frame", '<div class="brand-2">{{{body}}}</div>'],
    );

    // The default: all of it published, then Development's default moves to brand and the old
    // default is deleted there. Choosing the deletion alone brings the new default along.
    await publish();
    assert.equal((await diff()).summary.totalChanges, 0);
    const onboardedCopy = (await layoutsOf(prodApi)).find((l) => l.identifier === "novu-default-layout");
    assert.equal(onboardedCopy?.isDefault, true);
    assert.equal((await devApi.post(`/v1/layouts/${brand._id}/default`)).statusCode, 204);
    assert.equal((await devApi.delete(`/v1/layouts/${onboarded?._id}`)).statusCode, 204);
    const moved = await diff();
    assert.deepEqual(
      moved.layouts.map((l) => [l.resourceId, l.action, l.changes[0]?.diffs.new]).sort(),
      [
        [brand._id, "modified", { isDefault: true }],
        [onboarded?._id, "deleted", null],
      ].sort(),
    );
    const v1 = (await devApi.get("/v1/changes")).json().data as { _id: string; type: string }[];
    assert.deepEqual(
      v1.map((c) => [c._id, c.type]).sort(),
      [
        [brand._id, "DefaultLayout"],
        [onboarded?._id, "Layout"],
      ].sort(),
    );
    const both = await publish({ resources: [{ resourceType: "layout", resourceId: onboarded?._id }] });
    assert.deepEqual(
      both.data.layouts.successful.map((p: { resourceId: string; action: string }) => [
        p.resourceId,
        p.action,
      ]),
      [
        [onboarded?._id, "deleted"],
        [brand._id, "updated"],
      ],
    );
    assert.deepEqual(
      (await layoutsOf(prodApi)).map((l) => [l.identifier, l.isDefault]),
      [["brand", true]],
    );

    // A copy Production's own workflow still uses stays (skipped, with why) until it is free.
    const spare = await makeLayout(devApi, "spare");
    await publish();
    const spareCopy = (await layoutsOf(prodApi)).find((l) => l.identifier === "spare");
    const own = await createWorkflow(ctx, tenant.prod.apiKey, tenant.prod.generalGroupId, {
      name: uniqueName("Production's own"),
      steps: [emailStep(spareCopy?._id)],
    });
    assert.equal((await devApi.delete(`/v1/layouts/${spare._id}`)).statusCode, 204);
    const kept = await publish();
    assert.deepEqual(kept.data.layouts.skipped, [
      {
        resourceType: "layout",
        resourceId: spare._id,
        resourceName: "Layout spare",
        reason: "workflows of Production still use it",
      },
    ]);
    assert.deepEqual(kept.data.summary, { resources: 1, successful: 0, failed: 0, skipped: 1 });
    assert.ok((await layoutsOf(prodApi)).some((l) => l._id === spareCopy?._id));
    assert.equal((await prodApi.delete(`/v1/workflows/${own._id}`)).statusCode, 200);
    const freed = await publish();
    assert.deepEqual(
      freed.data.layouts.successful.map((p: { action: string; targetResourceId: string }) => [
        p.action,
        p.targetResourceId,
      ]),
      [["deleted", spareCopy?._id]],
    );

    // A layout of Production's own holds the identifier: nothing is published.
    await makeLayout(prodApi, "promo");
    const promo = await makeLayout(devApi, "promo");
    const promoted = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Promo"),
      steps: [emailStep(promo._id)],
    });
    const refusal = await publish({}, 422);
    assert.match(
      refusal.message,
      /^Nothing was published: Production has another layout of identifier "promo"$/,
    );
    assert.equal((await prodApi.get(`/v1/workflows/${promoted._id}`)).statusCode, 404);
    assert.deepEqual(
      (await diff()).layouts.map((l) => [l.resourceId, l.action]),
      [[promo._id, "added"]],
    );

    // Novu's v1 change list applies a layout change by its id.
    const legacy = new LegacyNovu(tenant.dev.apiKey, { backendUrl: serverURL });
    await prodApi.delete(
      `/v1/layouts/${(await layoutsOf(prodApi)).find((l) => l.identifier === "promo")?._id}`,
    );
    const applied = (await legacy.changes.applyOne(promo._id)).data.data;
    assert.deepEqual(
      applied.map((c: { _id: string; type: string; enabled: boolean }) => [c._id, c.type, c.enabled]),
      [[promo._id, "Layout", true]],
    );
    assert.equal((await layoutsOf(prodApi)).find((l) => l.identifier === "promo")?._parentId, promo._id);
  });

  test("workflows.sync publishes one workflow and answers its copy", async () => {
    const tenant = await ctx.tenant();
    const dev = sdk(tenant.dev.apiKey);
    const workflowId = `synced-${Date.now()}`;
    const made = (await dev.workflows.create({ name: "Synced", workflowId, steps: [] })).result;
    await dev.workflows.create({ name: "Left", workflowId: `left-${Date.now()}`, steps: [] });
    const synced = (await dev.workflows.sync({ targetEnvironmentId: tenant.prod.environmentId }, workflowId))
      .result;
    assert.equal(synced.workflowId, workflowId);
    assert.notEqual(synced.id, made.id);
    assert.equal((await production(tenant).get(`/v1/workflows/${synced.id}`)).json().data._parentId, made.id);
    assert.equal((await dev.environments.diff({}, tenant.prod.environmentId)).result.resources.length, 1);
    // Again: nothing to publish, the same copy.
    const again = (await dev.workflows.sync({ targetEnvironmentId: tenant.prod.environmentId }, workflowId))
      .result;
    assert.equal(again.id, synced.id);
  });

  test("Novu's v1 change list (@novu/node): get, getCount, applyOne, applyMany over the same comparison", async () => {
    const tenant = await ctx.tenant();
    const legacy = new LegacyNovu(tenant.dev.apiKey, { backendUrl: serverURL });
    const a = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("A"),
    });
    const b = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("B"),
    });
    const c = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("C"),
    });

    // The three workflows, and the default layout of onboarding (made before them: last, newest first).
    assert.equal((await legacy.changes.getCount()).data.data, 4);
    const listed = (await legacy.changes.get({ promoted: false, page: 0, limit: 2 })).data;
    assert.equal(listed.totalCount, 4);
    assert.equal(listed.data.length, 2);
    for (const change of listed.data) {
      assert.equal(change.type, "NotificationTemplate");
      assert.equal(change.enabled, false);
      assert.equal(change._environmentId, tenant.dev.environmentId);
    }
    assert.deepEqual((await legacy.changes.get({ promoted: true })).data.data, []);

    const one = (await legacy.changes.applyOne(a._id)).data.data;
    assert.deepEqual(
      one.map((ch: { _id: string; enabled: boolean }) => [ch._id, ch.enabled]),
      [[a._id, true]],
    );
    assert.equal(
      (await production(tenant).get(`/v1/workflows/${a.triggers[0].identifier}`)).json().data._parentId,
      a._id,
    );
    const many = (await legacy.changes.applyMany([b._id, c._id])).data.data;
    assert.deepEqual(many.map((ch: { _id: string }) => ch._id).sort(), [b._id, c._id].sort());
    // Left: the layout, which none of them names.
    const [layout] = (await legacy.changes.get({ promoted: false })).data.data;
    assert.deepEqual(
      [layout.type, layout.change.action, layout.change.name, layout.enabled],
      ["DefaultLayout", "added", "Default Layout", false],
    );
    assert.deepEqual(
      (await legacy.changes.applyOne(layout._id)).data.data.map((ch: { _id: string }) => ch._id),
      [layout._id],
    );
    assert.equal((await legacy.changes.getCount()).data.data, 0);
    // The same, seen through v2.
    assert.equal(
      (await sdk(tenant.dev.apiKey).environments.diff({}, tenant.prod.environmentId)).result.summary
        .hasChanges,
      false,
    );
    // A change that is not pending.
    const missing = await ctx.client(tenant.dev.apiKey).post(`/v1/changes/${a._id}/apply`, {});
    assert.equal(missing.statusCode, 404, missing.body);
    // Production derives nothing: it has no changes.
    assert.equal(
      (await new LegacyNovu(tenant.prod.apiKey, { backendUrl: serverURL }).changes.getCount()).data.data,
      0,
    );
  });

  test("environments: list, create (its key works), update, getTags, delete (its key refused); another organization's are not found", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const listed = (await novu.environments.list()).result;
    assert.deepEqual(
      listed.map((e) => [e.name, e.id]),
      [
        ["Development", tenant.dev.environmentId],
        ["Production", tenant.prod.environmentId],
      ],
    );
    const name = uniqueName("Staging");
    const staging = (await novu.environments.create({ name, color: "#ff0000" })).result;
    assert.equal(staging.name, name);
    assert.equal(staging.parentId, tenant.dev.environmentId);
    const key = staging.apiKeys?.[0]?.key ?? "";
    const me = await ctx.client(key).get("/v1/environments/me");
    assert.equal(me.json().data._id, staging.id, "the new environment's key works");
    assert.deepEqual(
      (await novu.environments.list()).result.map((e) => e.id),
      [tenant.dev.environmentId, tenant.prod.environmentId, staging.id],
    );

    // A workflow published into it, and its tags.
    await novu.workflows.create({
      name: "Tagged",
      workflowId: `tagged-${Date.now()}`,
      tags: ["b", "a"],
      steps: [],
    });
    await novu.environments.publish({}, staging.id);
    assert.deepEqual((await novu.environments.getTags(staging.id)).result, [{ name: "a" }, { name: "b" }]);
    assert.deepEqual((await novu.environments.getTags(tenant.prod.environmentId)).result, []);

    const renamed = (await novu.environments.update({ name: `${name} 2` }, staging.id)).result;
    assert.equal(renamed.name, `${name} 2`);
    assert.equal((await novu.environments.list()).result.at(-1)?.name, `${name} 2`);
    await refused(
      novu.environments.update({ name: "Other" }, tenant.prod.environmentId),
      400,
      /cannot change/,
    );

    // It holds a workflow: refused until it is gone.
    await refused(novu.environments.delete(staging.id), 400, /holds workflows/);
    const copy = (await sdk(key).workflows.list({})).result.workflows[0];
    await sdk(key).workflows.delete(copy?.id ?? "");
    await novu.environments.delete(staging.id);
    assert.equal((await novu.environments.list()).result.length, 2);
    assert.equal((await ctx.client(key).get("/v1/environments/me")).statusCode, 401);
    await refused(novu.environments.delete(tenant.prod.environmentId), 400, /Production cannot be deleted/);

    const other = await ctx.tenant();
    const stranger = sdk(other.dev.apiKey);
    await refused(stranger.environments.diff({}, tenant.prod.environmentId), 404, /was not found/);
    await refused(stranger.environments.publish({}, tenant.prod.environmentId), 404, /was not found/);
    await refused(stranger.environments.getTags(tenant.dev.environmentId), 404, /was not found/);
    await refused(stranger.workflows.get("anything", tenant.prod.environmentId), 404, /was not found/);
    await refused(novu.environments.diff({}, tenant.dev.environmentId), 400, /sourceEnvironmentId is needed/);
  });
});
